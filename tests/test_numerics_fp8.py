"""The SDK's one fp8 rounding and widening (`triton_backend_sdk.numerics_fp8`): PY constant folding against torch's
float8 conversions (nearest even) and an independent nearest-below search (toward zero), over f32 specials, every
fp8 code point, the midpoints between neighbouring codes and one f32 ulp either side, and random f32 bit patterns;
then `tt.fp_to_fp` kernels on every backend, bit for bit with PY.

Saturation and NaN follow PTX's `cvt.rn.satfinite` (the CUDA path), not torch: beyond the largest finite value,
infinities included, the result is that value with the input's sign; NaN is 0x7f with the input's sign (0x80 in
the fnuz formats, which have no negative zero).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import struct
from fractions import Fraction

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.ir.types import FloatKind
from triton_backend_sdk.numerics import PY, bits_float, float_bits
from triton_backend_sdk.numerics_fp8 import FP8_FORMATS, Fp8Format, f32_to_fp8_bits, fp8_bits, fp8_bits_of_widened

TORCH = {
    FloatKind.F8E4M3FN: torch.float8_e4m3fn,
    FloatKind.F8E5M2: torch.float8_e5m2,
    FloatKind.F8E4M3FNUZ: torch.float8_e4m3fnuz,
    FloatKind.F8E5M2FNUZ: torch.float8_e5m2fnuz,
}
KINDS = list(TORCH)


def _finite_codes(fmt: Fp8Format) -> list[int]:
    """Non-negative finite codes in increasing value."""
    return [c for c in range(0x80) if math.isfinite(fmt.decode(c)) and not (fmt.fnuz and c == 0x80)]


def _inputs(seed: int = 0) -> list[int]:
    """f32 bit patterns: specials, every code point of every format, midpoints and one ulp either side, random."""
    specials = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7F7FFFFF]
    specials += [0xFF7FFFFF, 1, 0x80000001, 0x007FFFFF, 0x00800000, 0x80800000, 0x3F800000, 0xBF800000]
    xs = set(specials)
    for fmt in FP8_FORMATS.values():
        vals = [fmt.decode(c) for c in _finite_codes(fmt)]
        top = vals[-1]
        vals.append(top + (top - vals[-2]))  # the next value the format would have: its midpoint with the top
        for lo, hi in itertools.pairwise(vals):
            for v in (lo, (lo + hi) / 2):
                b = float_bits(v)
                xs.update({b, b + 1, max(b - 1, 0)})
    xs = {b | s for b in xs for s in (0, 0x80000000)}
    rnd = random.Random(seed)
    xs.update(rnd.getrandbits(32) for _ in range(100_000))
    # random values inside the formats' ranges too (random bit patterns mostly are far outside)
    xs.update(float_bits(rnd.uniform(-60000, 60000) * 2.0 ** -rnd.randint(0, 30)) for _ in range(20_000))
    return sorted(xs)


INPUTS = _inputs()


def _satfinite(fmt: Fp8Format, x: int) -> int | None:
    """The PTX result where it is fixed by saturation or NaN, else None."""
    sign = (x >> 24) & 0x80
    ax = x & 0x7FFFFFFF
    if ax > 0x7F800000:
        return 0x80 if fmt.fnuz else sign | 0x7F
    if bits_float(ax) > fmt.decode(fmt.max_code):
        return sign | fmt.max_code
    return None


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_nearest_even_matches_torch_and_saturates(kind):
    fmt = FP8_FORMATS[kind]
    xs = torch.tensor(INPUTS, dtype=torch.int64).to(torch.int32).view(torch.float32)
    ref = xs.to(TORCH[kind]).view(torch.uint8).tolist()
    checked = 0
    for x, r in zip(INPUTS, ref):
        want = _satfinite(fmt, x)
        checked += want is None
        got = f32_to_fp8_bits(PY, x, fmt)
        assert got == (r if want is None else want), f"{fmt.name}: f32 {x:#010x} -> {got:#04x}"
    assert checked > 50_000


@pytest.mark.parametrize("kind", list(FP8_FORMATS), ids=lambda k: k.value)
def test_toward_zero_is_the_nearest_code_below(kind):
    """Reference: the largest code whose magnitude does not exceed |x| (a search over the decoded values)."""
    fmt = FP8_FORMATS[kind]
    codes = _finite_codes(fmt)
    vals = [fmt.decode(c) for c in codes]
    for x in INPUTS:
        want = _satfinite(fmt, x)
        if want is None:
            code = codes[bisect.bisect_right(vals, abs(bits_float(x))) - 1]
            sign = (x >> 24) & 0x80
            want = code | (0 if fmt.fnuz and code == 0 else sign)
        got = f32_to_fp8_bits(PY, x, fmt, rtz=True)
        assert got == want, f"{fmt.name}: f32 {x:#010x} -> {got:#04x}, expected {want:#04x}"


@pytest.mark.parametrize("kind", list(FP8_FORMATS), ids=lambda k: k.value)
def test_widening_is_exact(kind):
    """Every code's f32 bits: torch's value where torch has the format, else sign * 2**e * 1.m (0.m when e == 0)
    in exact arithmetic; NaN is a quiet NaN keeping the code's sign (positive for the fnuz NaN 0x80), and in e5m2
    0x7fc00000 for the narrowing's NaN 0x7f, the others' mantissa in its low bits; narrowing the widened value gives
    the code back, and `fp8_bits_of_widened` does for every code."""
    fmt = FP8_FORMATS[kind]
    bits = fmt.f32_bits
    ref = None
    if kind in TORCH:
        ref = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(TORCH[kind]).float().view(torch.int32)
    for c in range(256):
        b = bits[c]
        e, m = (c >> fmt.mbits) & ((1 << fmt.ebits) - 1), c & ((1 << fmt.mbits) - 1)
        assert fp8_bits_of_widened(PY, b, fmt) == c, hex(c)
        if (fmt.fnuz and c == 0x80) or (not fmt.fnuz and not fmt.ieee and c & 0x7F == 0x7F):
            assert b == (0x7FC00000 if fmt.fnuz else 0x7FC00000 | (c & 0x80) << 24), hex(c)
            continue
        if fmt.ieee and e == (1 << fmt.ebits) - 1:
            full = (1 << fmt.mbits) - 1
            assert b == (c & 0x80) << 24 | (0x7F800000 if m == 0 else 0x7FC00000 | (full - m)), hex(c)
            continue
        exact = Fraction(m if e == 0 else m + (1 << fmt.mbits)) * Fraction(2) ** (max(e, 1) - fmt.bias - fmt.mbits)
        assert Fraction(abs(bits_float(b))) == exact and b >> 31 == c >> 7, hex(c)
        if ref is not None:
            assert b == ref[c].item() & 0xFFFFFFFF, hex(c)
        assert f32_to_fp8_bits(PY, b, fmt) == c and f32_to_fp8_bits(PY, b, fmt, rtz=True) == c


@pytest.mark.parametrize("kind", list(FP8_FORMATS), ids=lambda k: k.value)
def test_f64_rounds_once(kind):
    """f64 constants go through f32 rounded to odd: a value a hair off a midpoint, below f32's resolution, still
    rounds to the nearer code (rounding to nearest f32 first would make it a tie)."""
    fmt = FP8_FORMATS[kind]
    codes = _finite_codes(fmt)
    vals = [Fraction(fmt.decode(c)) for c in codes]
    for i in range(len(codes) - 1):
        mid = (vals[i] + vals[i + 1]) / 2
        for off in (-(2.0**-45), 2.0**-45, 0.0):
            v = float(mid * (1 + Fraction(off)))
            lo, hi = abs(Fraction(v) - vals[i]), abs(vals[i + 1] - Fraction(v))
            near = codes[i] if lo < hi or (lo == hi and codes[i] % 2 == 0) else codes[i + 1]
            assert fp8_bits(v, fmt) == near, (fmt.name, v)
            assert fp8_bits(-v, fmt) == near | (0x80 if near or not fmt.fnuz else 0)
            assert fp8_bits(v, fmt, rtz=True) == codes[i]


# ---- generated code: tt.fp_to_fp on every backend, bit for bit with PY -------------------------------------------


@triton.jit
def _fp8_roundtrip(x_ptr, bits_ptr, back_ptr, n, FP8: tl.constexpr, ROUND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    f8 = x.to(FP8, fp_downcast_rounding=ROUND)
    tl.store(bits_ptr + offs, f8.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(back_ptr + offs, f8.to(x.dtype), mask=mask)


_TL = {FloatKind.F8E4M3FN: tl.float8e4nv, FloatKind.F8E5M2: tl.float8e5}
_SRC = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


def _kernel_inputs(src: torch.dtype) -> torch.Tensor:
    """The test inputs in the source type: f32 patterns as they are; for f16/bf16 the f32 patterns rounded (their
    own code points and midpoints included); for f64 the f32 values plus offsets below f32's resolution."""
    x = torch.tensor(INPUTS[::3], dtype=torch.int64).to(torch.int32).view(torch.float32)
    if src == torch.float64:
        d = x.double()
        return torch.cat([d, d * (1 + 2.0**-40), d * (1 - 2.0**-40)])
    return x.to(src)


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
@pytest.mark.parametrize("kind", list(_TL), ids=lambda k: k.value)
@pytest.mark.parametrize("src", list(_SRC))
def test_fp_to_fp_kernels_match_py(backend, src, kind, rounding):
    if src == "float64" and backend.startswith("opencl"):
        from triton_backend_sdk.backends.opencl.runtime import features_of, selected_device

        if "cl_khr_fp64" not in features_of(selected_device()):
            pytest.skip("the device has no fp64")
    fmt, rtz = FP8_FORMATS[kind], rounding == "rtz"
    x = _kernel_inputs(_SRC[src])
    n = x.numel()
    bits, back = torch.empty(n, dtype=torch.uint8), torch.empty_like(x)
    _fp8_roundtrip[(triton.cdiv(n, 1024),)](x, bits, back, n, FP8=_TL[kind], ROUND=rounding, BLOCK=1024)
    if src == "float64":
        want = [fp8_bits(v, fmt, rtz) for v in x.tolist()]
    else:  # f16 and bf16 widen to f32 exactly
        want = [f32_to_fp8_bits(PY, b & 0xFFFFFFFF, fmt, rtz) for b in x.float().view(torch.int32).tolist()]
    got = bits.tolist()
    bad = [i for i in range(n) if got[i] != want[i]]
    assert not bad, (
        f"{len(bad)} of {n} differ, first: {x[bad[0]].item()!r} -> {got[bad[0]]:#04x}, PY {want[bad[0]]:#04x}"
    )
    widened = torch.tensor([fmt.f32_bits[c] for c in want], dtype=torch.int64).to(torch.int32).view(torch.float32)
    if src == "float32":
        assert torch.equal(back.view(torch.int32), widened.view(torch.int32))
    else:
        ref = widened.to(x.dtype)
        same = (back == ref) & (torch.signbit(back) == torch.signbit(ref))
        assert bool((same | (back.isnan() & ref.isnan())).all())


def test_fp8_constants_fold_like_the_generated_code():
    """The IR reader's and cpu_ref's constants (`fp8_bits`) agree with f32 narrowing for f32 values."""
    rnd = random.Random(3)
    for fmt in FP8_FORMATS.values():
        for _ in range(2000):
            b = rnd.getrandbits(32)
            v = struct.unpack("<f", struct.pack("<I", b))[0]
            if math.isnan(v):
                continue
            assert fp8_bits(v, fmt) == f32_to_fp8_bits(PY, b, fmt)
            assert fp8_bits(v, fmt, rtz=True) == f32_to_fp8_bits(PY, b, fmt, rtz=True)


@triton.jit
def _fp8_moves(x_ptr, c_ptr, o_ptr, bits_ptr, M: tl.constexpr, N: tl.constexpr, FP8: tl.constexpr):
    r = tl.arange(0, M * N)
    x = tl.load(x_ptr + r)
    tl.store(o_ptr + r, x)
    tl.store(o_ptr + M * N + r, tl.where(r % 3 == 0, x, tl.load(x_ptr + (r ^ 1))))
    t = tl.trans(tl.reshape(x, (M, N)))  # out of the work-items' layout: through local memory on a GPU model
    tl.store(o_ptr + 2 * M * N + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], t)
    tl.store(bits_ptr + r, x.to(tl.uint8, bitcast=True))
    tl.store(o_ptr + 3 * M * N + r, tl.load(c_ptr + (M * N - 1 - r)).to(FP8, bitcast=True))


@pytest.mark.parametrize("kind", list(_TL), ids=lambda k: k.value)
def test_fp8_data_movement_is_bit_exact(backend, kind):
    """Every code, infinities and each NaN included, comes back unchanged from a load and a store, a select, a
    transpose and both bitcasts (fuzz seed 100 kernel 91: opencl stored a loaded e5m2 inf as 57344); conversions
    still saturate (test_nearest_even_matches_torch_and_saturates)."""
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    x = codes.view(TORCH[kind])
    o = torch.zeros(4 * 256, dtype=torch.uint8).view(TORCH[kind])
    bits = torch.zeros(256, dtype=torch.uint8)
    _fp8_moves[(1,)](x, codes, o, bits, M=16, N=16, FP8=_TL[kind])
    got = o.view(torch.uint8)
    r = torch.arange(256)
    assert got[:256].tolist() == codes.tolist()
    assert got[256:512].tolist() == torch.where(r % 3 == 0, codes, codes[r ^ 1]).tolist()
    assert got[512:768].tolist() == codes.view(16, 16).t().reshape(-1).tolist()
    assert bits.tolist() == codes.tolist()
    assert got[768:].tolist() == codes.flip(0).tolist()
