"""Benchmark kernels: the tutorial ones live in the package (triton_backend_sdk.bench.kernels, which `triton-sdk
bench` runs); this file re-exports them and adds the kernels only these pytest benchmarks time."""

from __future__ import annotations

import triton
import triton.language as tl
from triton_backend_sdk.bench.kernels import layer_norm_fwd_kernel, matmul, matmul_kernel

__all__ = ["layer_norm_fwd_kernel", "matmul", "matmul_kernel", "row_max_loop_kernel"]


@triton.jit
def row_max_loop_kernel(X, Y, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Y[m] = max over X[m, :] accumulated across column blocks (the loop shape of upstream's
    test_optimize_thread_locality; cpu_ref's `thread-locality` pass keeps per-lane partial maxima in the loop)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    local = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    for start in range(tl.cdiv(N, BLOCK_N)):
        cols = start * BLOCK_N + tl.arange(0, BLOCK_N)
        local = tl.maximum(local, tl.max(tl.load(X + rows[:, None] * N + cols[None, :]), axis=1))
    tl.store(Y + rows, local)
