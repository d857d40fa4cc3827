"""cpu_ref: the SDK's reference backend. Triton → SDK IR → LLVM IR (llvmlite) → native code, run by the static
launcher on a thread pool, one Triton program per task. Loaded by Triton through the `triton.backends` entry point."""
