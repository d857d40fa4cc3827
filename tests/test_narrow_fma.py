"""tl.fma on f16 and bf16 rounds once (sdk/transforms/narrow_fma.py): golden IR of the pass, its refusal of bf16 on
a device without fp64, and on every backend bit for bit against the exact a * b + c (fractions) rounded to nearest
even: random data over wide exponent ranges, products on a midpoint of the format with addends that decide the tie
(down to the smallest subnormal), overflow at the top, inf/NaN, signed zeros, a masked ragged tail."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.descriptor import ALL_DTYPES, TargetDescriptor
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.narrow_fma import NarrowFma

#: (torch dtype, significand bits with the implicit one, smallest normal exponent, largest exponent)
FORMATS = {"bf16": (torch.bfloat16, 8, -126, 127), "f16": (torch.float16, 11, -14, 15)}

_TTIR = """module {
  tt.func public @k(%a: tensor<4xbf16>, %h: f16) -> (tensor<4xbf16>, f16) {
    %0 = math.fma %a, %a, %a : tensor<4xbf16>
    %1 = math.fma %h, %h, %h : f16
    tt.return %0, %1 : tensor<4xbf16>, f16
  }
}"""


def test_pass_golden() -> None:
    """bf16 is computed in f64 (bits as i64), f16 in f32 (i32): the exact product, TwoSum, the round-to-odd fix (an
    ordered `one` compare of the error with 0, the even test, the step's direction), one truncf."""
    module = parse_ttir(_TTIR)
    NarrowFma().run(module, None)
    verify(module)
    text = print_module(module)
    assert "math.fma" not in text and text.count("arith.truncf") == 2
    for w, i, n in (("tensor<4xf64>", "tensor<4xi64>", "tensor<4xbf16>"), ("f32", "i32", "f16")):
        check_lines(
            text,
            f"""
            %A = arith.extf %{"a" if w != "f32" else "h"} : {n} to {w}
            = arith.mulf
            %S = arith.addf
            = arith.subf
            = arith.subf
            = arith.subf
            = arith.subf
            %E = arith.addf
            = arith.bitcast
            = arith.bitcast
            = arith.cmpf one
            = arith.andi
            = arith.cmpi eq
            = arith.xori
            = arith.cmpi slt
            = arith.subi
            = arith.addi
            = arith.select
            = arith.andi
            = arith.select
            : {i} to {w}
            : {w} to {n}
        """.replace("%A ", "")
            .replace("%S ", "")
            .replace("%E ", ""),
        )


def test_bf16_needs_fp64() -> None:
    """Without fp64 a bf16 fma is refused at compile time, naming why; f16 needs only f32."""
    with pytest.raises(UnsupportedError, match=r"math.fma on bf16.*f64.*fp64"):
        NarrowFma(fp64=False).run(parse_ttir(_TTIR), None)
    module = parse_ttir(_TTIR.replace("tensor<4xbf16>", "tensor<4xf16>"))
    NarrowFma(fp64=False).run(module, None)
    assert "f64" not in print_module(module)
    no_fp64 = TargetDescriptor("nofp64", "test", supported_dtypes=ALL_DTYPES - {"fp64"})
    assert NarrowFma(fp64=False) in legalization_passes(no_fp64, Options())
    assert NarrowFma(fp64=True) in legalization_passes(TargetDescriptor("fp64", "test"), Options())


# ---- the exact reference --------------------------------------------------------------------------------------------


def _round(v: Fraction, fmt: str) -> float:
    """`v` rounded to nearest even in `fmt` (inf beyond its range), as a float64."""
    _, p, emin, emax = FORMATS[fmt]
    if v == 0:
        return 0.0
    m = abs(v)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    q = Fraction(2) ** (max(e, emin) - p + 1)
    n = m / q
    r = math.floor(n)
    if n - r > Fraction(1, 2) or (n - r == Fraction(1, 2) and r % 2):
        r += 1
    top = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    val = math.inf if r * q > top else float(r * q)
    return math.copysign(val, v)


def exact_fma(a: float, b: float, c: float, fmt: str) -> float:
    """a * b + c rounded once: exact rational arithmetic for finite operands, IEEE's rules for the rest."""
    if not all(math.isfinite(x) for x in (a, b, c)):
        return a * b + c  # float64: inf/NaN combine as IEEE's fma does (exact here: no finite rounding matters)
    v = Fraction(a) * Fraction(b) + Fraction(c)
    if v == 0:  # exact zero: -0 only when both terms are -0 (a zero product keeps its sign), else +0
        prod_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
        return -0.0 if a * b == 0 and prod_neg and c == 0 and math.copysign(1, c) < 0 else 0.0
    r = _round(v, fmt)
    return r if r != 0 else math.copysign(0.0, v)


# ---- inputs ---------------------------------------------------------------------------------------------------------


def _midpoint_factors(p: int, rng: random.Random, count: int) -> list[tuple[int, int]]:
    """Odd significands ma, mb < 2**p whose product has p + 1 bits: ma * mb is a midpoint of the format."""
    out: list[tuple[int, int]] = []
    while len(out) < count:
        ma, mb = rng.randrange(1, 1 << p, 2), rng.randrange(1, 1 << p, 2)
        if (ma * mb).bit_length() == p + 1:
            out.append((ma, mb))
    return out


def _cases(fmt: str, seed: int = 0) -> list[tuple[float, float, float]]:
    dt, p, emin, emax = FORMATS[fmt]
    rng = random.Random(seed)
    tiny = 2.0 ** (emin - p + 1)  # the smallest subnormal
    top = float((2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax)
    cases: list[tuple[float, float, float]] = []
    # products on a midpoint: the addend decides the tie (0: to even; a hair above/below: away/toward)
    for ma, mb in _midpoint_factors(p, rng, 300):
        ea = rng.randint(-p - 6, 6)
        eb = rng.randint(-p - 6, 6)
        a, b = ma * 2.0**ea, mb * 2.0**eb
        prod = a * b
        ulp_exp = math.frexp(prod)[1] - p  # the product's half-ulp bit is its lowest
        for c in (0.0, tiny, -tiny, 2.0 ** (ulp_exp - 20), -(2.0 ** (ulp_exp - 20)), 2.0 ** (ulp_exp - 1)):
            s = rng.choice((1, -1))
            cases.append((s * a, b, s * c if rng.random() < 0.5 else c))
    # midpoints in the subnormal range and at the top (max + half an ulp rounds to inf; a hair less to max)
    for ma, mb in _midpoint_factors(p, rng, 40):
        shift = emin - p - (ma * mb).bit_length() + rng.randint(-1, p)
        a, b = float(ma), mb * 2.0**shift
        cases += [(a, b, 0.0), (a, b, tiny), (-a, b, -tiny)]
    half_over = float((2 - Fraction(2) ** -p) * Fraction(2) ** emax)  # = (2**(p+1) - 1) * 2**(emax - p)
    for ma in (3, 5, 7, 9, 13, 15):
        mb = ((1 << (p + 1)) - 1) // ma
        if ma * mb == (1 << (p + 1)) - 1 and mb < (1 << p):
            a, b = float(ma), half_over / ma
            cases += [(a, b, 0.0), (a, b, -tiny), (-a, b, tiny), (a, b, -(2.0 ** (emax - p - 3)))]
    # a product beyond the format's range cancelled back into it; overflow; exact cancellations; signed zeros
    big = 1.5 * 2.0 ** (emax - 1)
    cases += [(big, 4.0, -top), (big, 2.0, -top), (top, 2.0, 0.0), (top, top, -top), (-top, 1.5, -top)]
    cases += [(1.5, 2.5, -3.75), (-1.5, 2.5, 3.75), (0.0, 3.0, -0.0), (-0.0, 3.0, -0.0), (-0.0, 3.0, 0.0)]
    cases += [(tiny, tiny, 0.0), (-tiny, tiny, -0.0), (tiny, 0.5, 0.0), (tiny, 1.5, 0.0), (tiny, 2.5, -0.0)]
    inf, nan = math.inf, math.nan
    cases += [(inf, 2.0, 1.0), (inf, 0.0, 1.0), (inf, 1.0, -inf), (2.0, 3.0, -inf), (nan, 1.0, 1.0)]
    cases += [(1.0, 1.0, nan), (top, top, inf), (-inf, -inf, inf), (0.0, -inf, 0.0), (top, 2.0, -inf)]
    # random values over wide exponent ranges, addends near the product's magnitude and far below it
    for _ in range(3000):
        a = rng.gauss(0, 1) * 2.0 ** rng.randint(-(p + 10), 10)
        b = rng.gauss(0, 1) * 2.0 ** rng.randint(-(p + 10), 10)
        c = rng.gauss(0, 1) * abs(a * b) * 2.0 ** rng.choice((0, -4, -p, -2 * p, -60)) + (
            tiny if rng.random() < 0.1 else 0
        )
        cases.append((a, b, c))
    # every operand a value of the format (the ones above were built as such; the random ones are rounded)
    return [tuple(torch.tensor(v, dtype=torch.float64).to(dt).item() for v in t) for t in cases]  # type: ignore[misc]


@triton.jit
def _fma_kernel(x_ptr, y_ptr, z_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    z = tl.load(z_ptr + offs, mask=m)
    tl.store(o_ptr + offs, tl.fma(x, y, z), mask=m)


def _bits(values: list[float], dt: torch.dtype) -> list[int]:
    return torch.tensor(values, dtype=torch.float64).to(dt).view(torch.int16).tolist()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_fma_rounds_once(backend: str, fmt: str) -> None:
    dt = FORMATS[fmt][0]
    cases = _cases(fmt)
    rng = random.Random(1)
    rng.shuffle(cases)
    n = len(cases)
    x, y, z = (torch.tensor([c[i] for c in cases], dtype=torch.float64).to(dt) for i in range(3))
    o = torch.full((n + 300,), -7.0, dtype=dt)  # past n: must stay as it is (the last program is masked)
    _fma_kernel[(triton.cdiv(n, 256),)](x, y, z, o, n, BLOCK=256)
    want = [exact_fma(*c, fmt) for c in cases]
    got = o[:n].double().tolist()
    bad = [
        (cases[i], got[i], want[i])
        for i in range(n)
        if not (math.isnan(want[i]) and math.isnan(got[i])) and _bits([got[i]], dt) != _bits([want[i]], dt)
    ]
    assert not bad, f"{len(bad)} of {n} wrong, e.g. {bad[:5]}"
    assert (o[n:] == -7.0).all()


@pytest.mark.parametrize("fmt,wide", [("bf16", "f64"), ("f16", "f32"), ("f16", "f64")])
def test_the_cases_catch_a_wide_fma(fmt: str, wide: str) -> None:
    """How many cases a wide fma then narrowed (two roundings) gets wrong: bf16 through f64 (cpu_ref before the
    pass) and f16 through f32 (opencl before it) both fail some; f16 through f64 happens to be right on them all
    (f16's exponent range is too small for an inexact f64 sum to land on an f16 midpoint)."""
    cases = [c for c in _cases(fmt) if all(map(math.isfinite, c))]
    wrong = 0
    for a, b, c in cases:
        d = float(Fraction(a) * Fraction(b) + Fraction(c))  # one rounding to f64
        if wide == "f32":
            d = torch.tensor(d, dtype=torch.float64).float().item()
        if _bits([_round(Fraction(d), fmt)], FORMATS[fmt][0]) != _bits([exact_fma(a, b, c, fmt)], FORMATS[fmt][0]):
            wrong += d != 0
    assert (wrong > 0) == (wide != "f64" or fmt == "bf16"), wrong
