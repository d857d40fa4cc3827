"""OpenCL C rendering: shared C-like rules plus the OpenCL language table."""
