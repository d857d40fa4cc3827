"""opencl: Triton kernels as OpenCL C through pyopencl (PoCL on CPUs, vendor OpenCL on GPUs)."""
