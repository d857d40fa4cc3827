"""SDK-owned IR for Triton kernels: types, attributes, ops, TTIR reader and printer."""
