"""`tt.dot_scaled` on every backend (decomposed by sdk/transforms/dot_scaled.py) vs a torch float64 reference that
decodes the MX formats independently: every operand format on each side, scales on neither/either/both sides, fp4
packed along K or along M/N, 16- and 32-element scale groups, batched 3-D, NaN scales, fastMath."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

FORMATS = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]
_FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
_FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


@triton.jit
def _dot_scaled_kernel(
    a_ptr,
    sa_ptr,
    b_ptr,
    sb_ptr,
    acc_ptr,
    out_ptr,
    A0: tl.constexpr,
    A1: tl.constexpr,
    B0: tl.constexpr,
    B1: tl.constexpr,
    M: tl.constexpr,
    N: tl.constexpr,
    KS: tl.constexpr,
    FA: tl.constexpr,
    FB: tl.constexpr,
    PACK_A: tl.constexpr,
    PACK_B: tl.constexpr,
    FAST: tl.constexpr,
):
    a = tl.load(a_ptr + tl.arange(0, A0)[:, None] * A1 + tl.arange(0, A1)[None, :])
    b = tl.load(b_ptr + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :])
    if sa_ptr is not None:
        sa_ptr = tl.load(sa_ptr + tl.arange(0, M)[:, None] * KS + tl.arange(0, KS)[None, :])
    if sb_ptr is not None:
        sb_ptr = tl.load(sb_ptr + tl.arange(0, N)[:, None] * KS + tl.arange(0, KS)[None, :])
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    acc = tl.load(acc_ptr + offs)
    c = tl.dot_scaled(a, sa_ptr, FA, b, sb_ptr, FB, acc, fast_math=FAST, lhs_k_pack=PACK_A, rhs_k_pack=PACK_B)
    tl.store(out_ptr + offs, c)


@triton.jit
def _dot_scaled_3d_kernel(
    a_ptr, sa_ptr, b_ptr, out_ptr, NB: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr
):
    bi = tl.arange(0, NB)[:, None, None]
    a = tl.load(
        a_ptr + bi * (M * K // 2) + tl.arange(0, M)[None, :, None] * (K // 2) + tl.arange(0, K // 2)[None, None, :]
    )
    sa = tl.load(
        sa_ptr + bi * (M * K // 32) + tl.arange(0, M)[None, :, None] * (K // 32) + tl.arange(0, K // 32)[None, None, :]
    )
    b = tl.load(b_ptr + bi * (K * N) + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, None, "e4m3")
    tl.store(out_ptr + bi * (M * N) + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


def _operand(kind: str, shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    """Random operand data in the layout the kernel loads (e2m1: packed bytes; fp8: finite codes as uint8)."""
    if kind in ("bf16", "fp16"):
        return torch.randn(shape, generator=g).to(torch.bfloat16 if kind == "bf16" else torch.float16)
    x = torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
    if kind in _FP8:  # the non-finite codes would turn whole rows into NaN: map them to finite ones
        top = 0x7F if kind == "e4m3" else 0x7C
        x = torch.where((x & top) == top, x & 0xF3, x)
    return x


def _decode(kind: str, x: torch.Tensor, packed_axis: int | None) -> torch.Tensor:
    """Exact values as float64 in the unpacked shape."""
    if kind == "e2m1":
        lo, hi = _FP4[(x & 15).long()], _FP4[(x >> 4).long()]
        return torch.stack([lo, hi], dim=packed_axis + 1).flatten(packed_axis, packed_axis + 1).double()
    if kind in _FP8:
        return x.view(_FP8[kind]).double()
    return x.double()


def _scale(s: torch.Tensor) -> torch.Tensor:
    """e8m0 → 2^(s-127), Triton's convention for byte 0 (0.0) and byte 255 (NaN)."""
    v = torch.exp2(s.double() - 127)
    v = torch.where(s == 0, torch.zeros_like(v), v)
    return torch.where(s == 255, torch.full_like(v, float("nan")), v)


def _run(
    fa: str,
    fb: str,
    scales: str,
    *,
    m: int = 16,
    n: int = 16,
    k: int = 64,
    group: int = 32,
    pack_a: bool = True,
    pack_b: bool = True,
    fast: bool = False,
    nan_scale: bool = False,
) -> None:
    g = torch.Generator().manual_seed(hash((fa, fb, scales, pack_a, pack_b, group)) & 0xFFFF)
    a_shape = (m, k // 2 if pack_a else k) if fa == "e2m1" else (m, k)
    b_shape = (k // 2 if pack_b else k, n) if fb == "e2m1" else (k, n)
    if fa == "e2m1" and not pack_a:
        a_shape = (m // 2, k)
    if fb == "e2m1" and not pack_b:
        b_shape = (k, n // 2)
    a, b = _operand(fa, a_shape, g), _operand(fb, b_shape, g)
    sa = torch.randint(115, 135, (m, k // group), generator=g, dtype=torch.uint8) if "a" in scales else None
    sb = torch.randint(115, 135, (n, k // group), generator=g, dtype=torch.uint8) if "b" in scales else None
    if nan_scale:
        sa[1, 0] = 255
        sa[3, 0] = 0
    acc = torch.randn((m, n), generator=g)
    out = torch.empty_like(acc)
    _dot_scaled_kernel[(1,)](a, sa, b, sb, acc, out, *a_shape, *b_shape, m, n, k // group, fa, fb, pack_a, pack_b, fast)
    x = _decode(fa, a, 1 if pack_a else 0)
    y = _decode(fb, b, 0 if pack_b else 1)
    if sa is not None:
        x = x * _scale(sa).repeat_interleave(group, dim=1)
    if sb is not None:
        y = y * _scale(sb).repeat_interleave(group, dim=1).T
    ref = x @ y + acc.double()
    bound = x.abs().nan_to_num() @ y.abs().nan_to_num() + acc.double().abs()
    got = out.double()
    if nan_scale and not fast:
        assert got[1].isnan().all() and not got[3].isnan().any()
        ref, got, bound = ref[2:], got[2:], bound[2:]
    finite = ref.isfinite()
    assert torch.equal(finite, got.isfinite()), "non-finite results differ"
    assert ((got - ref).abs()[finite] <= 1e-5 * bound[finite] + 1e-30).all(), (got - ref).abs().max()


#: every format on each side; which side carries a scale rotates so that each format meets every scale placement
_CASES = [(fa, fb, ["", "a", "b", "ab"][(i + j) % 4]) for i, fa in enumerate(FORMATS) for j, fb in enumerate(FORMATS)]


@pytest.mark.parametrize("fa, fb, scales", _CASES)
def test_dot_scaled_formats(backend: str, fa: str, fb: str, scales: str) -> None:
    _run(fa, fb, scales)


@pytest.mark.parametrize("pack_a, pack_b", [(False, True), (True, False), (False, False)])
def test_dot_scaled_fp4_packed_along_m_n(backend: str, pack_a: bool, pack_b: bool) -> None:
    _run("e2m1", "e2m1", "ab", pack_a=pack_a, pack_b=pack_b)


def test_dot_scaled_group_16(backend: str) -> None:
    _run("e2m1", "e4m3", "ab", group=16)


def test_dot_scaled_nan_and_zero_scale(backend: str) -> None:
    """Scale byte 255 makes its row NaN; byte 0 gives zeros (Triton's convention, as its GPU emulation)."""
    _run("e4m3", "bf16", "a", nan_scale=True)


def test_dot_scaled_fast_math(backend: str) -> None:
    _run("e2m1", "fp16", "ab", fast=True)


def test_dot_scaled_batched(backend: str) -> None:
    g = torch.Generator().manual_seed(3)
    nb, m, n, k = 2, 16, 16, 64
    a = torch.randint(0, 256, (nb, m, k // 2), generator=g, dtype=torch.uint8)
    sa = torch.randint(118, 132, (nb, m, k // 32), generator=g, dtype=torch.uint8)
    b = _operand("e4m3", (nb, k, n), g)
    out = torch.empty((nb, m, n))
    _dot_scaled_3d_kernel[(1,)](a, sa, b, out, nb, m, n, k)
    x = _decode("e2m1", a, 2) * _scale(sa).repeat_interleave(32, dim=2)
    y = _decode("e4m3", b, None)
    bound = x.abs() @ y.abs()
    assert ((out.double() - x @ y).abs() <= 1e-5 * bound + 1e-30).all()
