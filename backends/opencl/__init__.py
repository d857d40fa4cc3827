"""opencl: Triton kernels as OpenCL C 1.2, run through pyopencl (PoCL, NVIDIA, ...). One Triton program is one
work-group of num_warps × warp_size work-items; see `render/context.py` for the execution model. Loaded by Triton
through the `triton.backends` entry point; never the default driver."""
