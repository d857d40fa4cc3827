"""Triton's tutorials 01–06 as conformance cases (the kernels in the tutorials' own structure, one launch each):
vector add, persistent fused softmax, matmul (the autotuned kernel at a fixed config), low-memory dropout (Philox),
layer-norm forward, fused attention forward in fp16 and fp32. References are float64 torch (Philox in numpy for
dropout). tests/test_tutorials.py imports these kernels and adds the multi-kernel flows (autotuning, layer-norm
backward with atomic_cas locks).
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .random import _uniform, philox
from .tolerance import EXACT, normwise


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(output_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(
    output_ptr,
    input_ptr,
    input_row_stride,
    output_row_stride,
    n_rows,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
    num_stages: tl.constexpr,
):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        softmax_output = numerator / tl.sum(numerator, axis=0)
        tl.store(output_ptr + row_idx * output_row_stride + col_offsets, softmax_output, mask=mask)


def _matmul_configs():
    return [
        triton.Config(
            {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4}, num_stages=3, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4
        ),
        triton.Config(
            {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2}, num_stages=2, num_warps=2
        ),
    ]


@triton.autotune(configs=_matmul_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = tl.where(accumulator >= 0, accumulator, 0.01 * accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    tl.store(output_ptr + offsets, tl.where(x_keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        tl.store(Y + cols, x_hat * w + b, mask=mask)


@triton.jit
def _attn_fwd(
    Q,
    K,
    V,
    Out,
    sm_scale,
    stride_qz,
    stride_qh,
    stride_qm,
    stride_qk,
    Z,
    H,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(
        Q + base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk, mask=offs_m[:, None] < N_CTX, other=0.0
    )
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(
            K + base + cols[None, :] * stride_qm + offs_d[:, None] * stride_qk, mask=cols[None, :] < N_CTX, other=0.0
        )
        qk = tl.dot(q, k)
        valid = cols[None, :] < N_CTX
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(
            V + base + cols[:, None] * stride_qm + offs_d[None, :] * stride_qk, mask=cols[:, None] < N_CTX, other=0.0
        )
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(
        Out + base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk,
        acc.to(Out.type.element_ty),
        mask=offs_m[:, None] < N_CTX,
    )


def _g_randn(shape: tuple[int, ...], g: torch.Generator, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
    return torch.randn(shape, generator=g, dtype=torch.float64).mul(scale).add(shift)


_DT = {"float16": torch.float16, "float32": torch.float32}


def _add_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x, y = torch.rand(n, generator=g), torch.rand(n, generator=g)
    return Launch([x, y, torch.empty_like(x), n], (triton.cdiv(n, 1024),), (2,), {"BLOCK_SIZE": 1024})


register(
    Case(
        "tutorial_01_vector_add",
        "tutorial.01_vector_add",
        add_kernel,
        ("float32",),
        ((1,), (4097,), (98432,)),
        _add_build,
        lambda launch, d: [launch.args[0] + launch.args[1]],
        EXACT,
    )
)


def _softmax_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    rows, cols = shape
    x = _g_randn((rows, cols), g).float()
    y = torch.empty_like(x)
    return Launch(
        [y, x, x.stride(0), y.stride(0), rows, cols],
        (min(rows, 8),),
        (0,),
        {"BLOCK_SIZE": triton.next_power_of_2(cols), "num_stages": 2},
    )


register(
    Case(
        "tutorial_02_fused_softmax",
        "tutorial.02_fused_softmax",
        softmax_kernel,
        ("float32",),
        ((1, 1), (37, 781), (130, 1024)),
        _softmax_build,
        lambda launch, d: [torch.softmax(launch.args[1].double(), 1)],
        normwise(8),
        note="persistent: fewer programs than rows",
    )
)


def _matmul_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    m, n, k = shape
    a, b = _g_randn((m, k), g).half(), _g_randn((k, n), g).half()
    c = torch.empty(m, n, dtype=torch.float16)
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    return Launch(
        [a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)],
        grid,
        (2,),
        {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 4, "ACTIVATION": "leaky_relu"},
    )


def _matmul_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    want = launch.args[0].double() @ launch.args[1].double()
    return [torch.where(want >= 0, want, 0.01 * want)]


register(
    Case(
        "tutorial_03_matmul",
        "tutorial.03_matmul",
        matmul_kernel.fn,
        ("float16",),
        ((1, 1, 1), (100, 70, 130), (128, 64, 96)),
        _matmul_build,
        _matmul_ref,
        normwise(4),
        note="the autotuned kernel's JIT function at one of its configs",
    )
)


def _dropout_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x = torch.randn(n, generator=g) + 3
    return Launch([x, torch.empty_like(x), n, 0.4, 123], (triton.cdiv(n, 1024),), (1,), {"BLOCK_SIZE": 1024})


def _dropout_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x, n, p, seed = launch.args[0], launch.args[2], launch.args[3], launch.args[4]
    offs = np.arange(n, dtype=np.uint32)
    z = np.zeros(n, dtype=np.uint32)
    keep = torch.from_numpy(_uniform(philox(seed, offs, z, z, z)[0]) > p)
    return [torch.where(keep, x.double() / (1 - p), 0.0)]


register(
    Case(
        "tutorial_04_low_memory_dropout",
        "tutorial.04_dropout",
        seeded_dropout_kernel,
        ("float32",),
        ((1,), (5000,)),
        _dropout_build,
        _dropout_ref,
        normwise(2),
    )
)


def _ln_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    m, n = shape
    dt = _DT[dtype]
    x = _g_randn((m, n), g, 1.0, 0.5).to(dt)
    w, b = torch.rand(n, generator=g).to(dt), _g_randn((n,), g).to(dt)
    y = torch.empty_like(x)
    mean, rstd = torch.empty(m), torch.empty(m)
    return Launch(
        [x, y, w, b, mean, rstd, x.stride(0), n, 1e-5],
        (m,),
        (1, 4, 5),
        {"BLOCK_SIZE": min(1024, triton.next_power_of_2(n))},
    )


def _ln_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x, w, b = (launch.args[i].double() for i in (0, 2, 3))
    mean = x.mean(1)
    var = x.var(1, unbiased=False)
    rstd = 1 / torch.sqrt(var + 1e-5)
    y = (x - mean[:, None]) * rstd[:, None] * w + b
    return [y, mean, rstd]


register(
    Case(
        "tutorial_05_layer_norm_forward",
        "tutorial.05_layer_norm_fwd",
        _layer_norm_fwd_fused,
        ("float32", "float16"),
        ((1, 3), (151, 300), (64, 1024)),
        _ln_build,
        _ln_ref,
        lambda d: normwise(16 if d == "float32" else 4),
    )
)


def _attn_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    z, h, n_ctx, d, causal = shape
    dt = _DT[dtype]
    q, k, v = (_g_randn((z, h, n_ctx, d), g, 0.5).to(dt) for _ in range(3))
    out = torch.empty_like(q)
    return Launch(
        [q, k, v, out, 0.5, q.stride(0), q.stride(1), q.stride(2), q.stride(3), z, h, n_ctx],
        (triton.cdiv(n_ctx, 32), z * h, 1),
        (3,),
        {"HEAD_DIM": d, "BLOCK_M": 32, "BLOCK_N": 32, "CAUSAL": bool(causal)},
    )


def _attn_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    q, k, v = (launch.args[i].double() for i in range(3))
    n_ctx = q.shape[2]
    s = (q @ k.transpose(-1, -2)) * launch.args[4]
    if launch.constexprs["CAUSAL"]:
        s = s.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
    return [torch.softmax(s, -1) @ v]


register(
    Case(
        "tutorial_06_fused_attention_forward",
        "tutorial.06_attention_fwd",
        _attn_fwd,
        ("float16", "float32"),
        ((1, 2, 128, 64, 0), (2, 3, 100, 32, 1), (1, 1, 1, 16, 0)),
        _attn_build,
        _attn_ref,
        lambda d: normwise(64 if d == "float16" else 512),
        note="fp16: P is rounded to fp16 before P·V, as in the tutorial",
    )
)
