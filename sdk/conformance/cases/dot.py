"""`tt.dot`: fp32 (ieee), fp16/bf16 inputs accumulating in fp32, int8 accumulating in int32, fp64, with an
accumulator, on rectangular tiles, masked K tails and a batched (3-D) dot."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import TORCH, rand
from .tolerance import EXACT, normwise


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & (k0 + rk < K)[None, :], other=0
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=(k0 + rk < K)[:, None] & (rn < N)[None, :], other=0
        )
        acc = tl.dot(a, b, acc, input_precision="ieee", out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn < N)[None, :])


_ACC = {
    "float16": (tl.float32, torch.float32),
    "bfloat16": (tl.float32, torch.float32),
    "float32": (tl.float32, torch.float32),
    "float64": (tl.float64, torch.float64),
    "int8": (tl.int32, torch.int32),
}


def _build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    m, n, k = shape
    a, b = rand((m, k), dtype, g, 1, 4), rand((k, n), dtype, g, 1, 4)
    acc_tl, acc_t = _ACC[dtype]
    c = torch.empty((m, n), dtype=acc_t)
    return Launch(
        [a, b, c, m, n, k],
        (triton.cdiv(m, 16), triton.cdiv(n, 32)),
        (2,),
        {"BM": 16, "BN": 32, "BK": 16, "ACC": acc_tl},
    )


def _ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    a, b = launch.args[0], launch.args[1]
    if dtype == "int8":
        return [(a.long() @ b.long()).int()]
    return [a.double() @ b.double()]


register(
    Case(
        "dot",
        "tt.dot",
        dot_kernel,
        tuple(_ACC),
        ((16, 32, 16), (33, 47, 70), (1, 1, 1)),
        _build,
        _ref,
        lambda d: EXACT if d == "int8" else normwise(16),
    )
)


@triton.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)[None, :, None]
    rn = tl.arange(0, N)[None, None, :]
    rk_col = tl.arange(0, K)[None, None, :]
    rk_row = tl.arange(0, K)[None, :, None]
    a = tl.load(a_ptr + rb * M * K + rm * K + rk_col)
    b = tl.load(b_ptr + rb * K * N + rk_row * N + rn)
    tl.store(c_ptr + rb * M * N + rm * N + rn, tl.dot(a, b, input_precision="ieee"))


def _batched_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    bsz, m, n, k = shape
    a, b = rand((bsz, m, k), dtype, g, 1, 4), rand((bsz, k, n), dtype, g, 1, 4)
    return Launch([a, b, torch.empty((bsz, m, n), dtype=torch.float32)], (1,), (2,), {"B": bsz, "M": m, "N": n, "K": k})


register(
    Case(
        "dot_batched",
        "tt.dot",
        batched_dot_kernel,
        ("float16", "float32"),
        ((2, 16, 16, 16), (4, 16, 32, 64)),
        _batched_build,
        lambda launch, d: [launch.args[0].double() @ launch.args[1].double()],
        normwise(16),
    )
)

assert TORCH


@triton.jit
def dot_fp8_kernel(
    a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr
):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(FA)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(FB)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


_FP8_PAIRS = {
    "e4m3xe4m3": (tl.float8e4nv, torch.float8_e4m3fn, tl.float8e4nv, torch.float8_e4m3fn),
    "e4m3xe5m2": (tl.float8e4nv, torch.float8_e4m3fn, tl.float8e5, torch.float8_e5m2),
}


def _fp8_build(pair: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    m, n, k = shape
    fa, _, fb, _ = _FP8_PAIRS[pair]
    a, b = rand((m, k), "float32", g, 0.1, 4), rand((k, n), "float32", g, 0.1, 4)
    return Launch([a, b, torch.empty((m, n))], (1,), (2,), {"M": m, "N": n, "K": k, "FA": fa, "FB": fb})


def _fp8_ref(launch: Launch, pair: str) -> list[torch.Tensor]:
    _, ta, _, tb = _FP8_PAIRS[pair]
    a, b = launch.args[0].to(ta).double(), launch.args[1].to(tb).double()
    return [a @ b]


register(
    Case(
        "dot_fp8",
        "tt.dot",
        dot_fp8_kernel,
        tuple(_FP8_PAIRS),
        ((16, 16, 32), (32, 16, 16)),
        _fp8_build,
        _fp8_ref,
        normwise(16),
        interpreter=False,
        note="dtypes name the fp8 operand formats",
    )
)
