"""tinyc: Triton kernels as plain C, built by the system C compiler and run by the SDK's launch contract."""

__version__ = "0.1.0"
