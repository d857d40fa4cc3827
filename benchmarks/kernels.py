"""Benchmark kernels: the tutorial ones live in the package (triton_backend_sdk.bench.kernels, which `triton-sdk
bench` runs); this file re-exports them and adds the kernels only these pytest benchmarks time."""

from __future__ import annotations

import triton
import triton.language as tl
from triton_backend_sdk.bench.kernels import layer_norm_fwd_kernel, matmul, matmul_kernel

__all__ = ["int8_matmul_kernel", "layer_norm_fwd_kernel", "matmul", "matmul_kernel", "row_max_loop_kernel"]


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


@triton.jit
def int8_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop on int8 operands into an int32 accumulator (GROUP_M=8 order, masked k tail)."""
    pid = tl.program_id(0)
    num_pid_m, num_pid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group_id = pid // (8 * num_pid_n)
    first_pid_m = group_id * 8
    group_size_m = min(num_pid_m - first_pid_m, 8)
    pid_m = first_pid_m + ((pid % (8 * num_pid_n)) % group_size_m)
    pid_n = (pid % (8 * num_pid_n)) // group_size_m
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_bn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_cm[:, None] * N + offs_cn[None, :], acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
