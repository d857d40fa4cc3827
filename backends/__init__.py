"""Backends shipped with triton_backend_sdk; each subpackage is one Triton backend (entry point group ``triton.backends``)."""
