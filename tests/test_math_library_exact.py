"""The math library's exact functions on every backend: directed-rounding arithmetic and conversions against exact
rational references (Python's fractions), integer helpers against numpy, Bessel functions of the first and second
kind against scipy (absolute error: the device-independent expansion is what opencl runs), random bit patterns
(every exponent, subnormals, overflow and underflow) with masks and ragged sizes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.special as sp
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

#: elementwise code: opencl@wg128 runs the same OpenCL C per element as opencl, so the two SDK backends suffice
pytestmark = pytest.mark.parametrize("backend", ["cpu_ref", "opencl"], indirect=True)


@triton.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, FN: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if FN == "add":
        r = (
            libdevice.add_rd(x, y)
            if MODE == "rd"
            else (libdevice.add_ru(x, y) if MODE == "ru" else libdevice.add_rz(x, y))
        )
    elif FN == "sub":
        r = (
            libdevice.sub_rd(x, y)
            if MODE == "rd"
            else (libdevice.sub_ru(x, y) if MODE == "ru" else libdevice.sub_rz(x, y))
        )
    elif FN == "mul":
        r = (
            libdevice.mul_rd(x, y)
            if MODE == "rd"
            else (libdevice.mul_ru(x, y) if MODE == "ru" else libdevice.mul_rz(x, y))
        )
    elif FN == "div":
        r = (
            libdevice.div_rd(x, y)
            if MODE == "rd"
            else (libdevice.div_ru(x, y) if MODE == "ru" else libdevice.div_rz(x, y))
        )
    elif FN == "fma":
        r = (
            libdevice.fma_rd(x, y, x)
            if MODE == "rd"
            else (libdevice.fma_ru(x, y, x) if MODE == "ru" else libdevice.fma_rz(x, y, x))
        )
    elif FN == "sqrt":
        r = libdevice.sqrt_rd(x) if MODE == "rd" else (libdevice.sqrt_ru(x) if MODE == "ru" else libdevice.sqrt_rz(x))
    else:
        r = libdevice.rcp_rd(x) if MODE == "rd" else (libdevice.rcp_ru(x) if MODE == "ru" else libdevice.rcp_rz(x))
    tl.store(out_ptr + offs, r, mask=mask)


def _random_floats(n: int, dtype, rng: np.random.Generator) -> np.ndarray:
    """Random bit patterns (every exponent, subnormals) without NaN/inf, plus zeros and near-cancelling values."""
    ity = np.uint32 if dtype == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(ity).max, size=n, dtype=ity, endpoint=True)
    x = bits.view(dtype)
    x = np.where(np.isfinite(x), x, dtype(1.5))
    x[:8] = [0.0, -0.0, 1.0, -1.0, 3.0, np.finfo(dtype).max, np.finfo(dtype).smallest_subnormal, 0.1]
    return x


def _round(value: Fraction, dtype, mode: str) -> float:
    """The exact rational `value` rounded to `dtype` toward -inf (rd), +inf (ru) or zero (rz), inf past the range."""
    top = float(np.finfo(dtype).max)
    if mode == "rz":
        mode = "rd" if value >= 0 else "ru"
    if value > Fraction(top):
        return float("inf") if mode == "ru" else top
    if value < -Fraction(top):
        return float("-inf") if mode == "rd" else -top
    c = dtype(float(value))
    down, up = dtype(-np.inf), dtype(np.inf)
    if mode == "rd":
        while Fraction(float(c)) > value:
            c = np.nextafter(c, down)
        while np.nextafter(c, up) <= top and Fraction(float(np.nextafter(c, up))) <= value:
            c = np.nextafter(c, up)
    else:
        while Fraction(float(c)) < value:
            c = np.nextafter(c, up)
        while np.nextafter(c, down) >= -top and Fraction(float(np.nextafter(c, down))) >= value:
            c = np.nextafter(c, down)
    return float(c)


def _exact(fn: str, x: float, y: float) -> Fraction | None:
    fx, fy = Fraction(float(x)), Fraction(float(y))
    if fn == "add":
        return fx + fy
    if fn == "sub":
        return fx - fy
    if fn == "mul":
        return fx * fy
    if fn == "div":
        return fx / fy if fy != 0 else None
    if fn == "fma":
        return fx * fy + fx
    if fn == "rcp":
        return 1 / fx if fx != 0 else None
    return None


def _zero_sum(fn: str, x, y, mode: str) -> float:
    """IEEE's sign of an exact zero sum: -0 where both addends are -0 (rd: unless both are +0)."""
    with np.errstate(all="ignore"):
        addends = {
            "add": (x, y),
            "sub": (x, -y),
            "fma": (x * y if x * y != 0 else np.copysign(0.0, x) * np.copysign(1.0, y), x),
        }[fn]
    negative = [bool(np.signbit(a)) for a in addends]
    if mode == "rd":
        return 0.0 if not any(negative) else -0.0
    return -0.0 if all(negative) else 0.0


def _sqrt_round(x: float, dtype, mode: str) -> float:
    """√x rounded toward -inf (rd, rz) or +inf (ru): the float c with c² on the right side of x, its neighbour not."""
    if x < 0:
        return float("nan")
    if x == 0:
        return float(x)
    fx = Fraction(float(x))
    c = dtype(np.sqrt(np.float64(x))) if dtype == np.float32 else np.sqrt(dtype(x))
    down, up = dtype(-np.inf), dtype(np.inf)
    sq = lambda v: Fraction(float(v)) ** 2
    if mode in ("rd", "rz"):
        while sq(c) > fx:
            c = np.nextafter(c, down)
        while sq(np.nextafter(c, up)) <= fx:
            c = np.nextafter(c, up)
    else:
        while sq(c) < fx:
            c = np.nextafter(c, up)
        while c > 0 and sq(np.nextafter(c, down)) >= fx:
            c = np.nextafter(c, down)
    return float(c)


CASES = [
    (fn, mode, dt)
    for fn in ("add", "sub", "mul", "div", "fma", "sqrt", "rcp")
    for mode in ("rz", "rd", "ru")
    for dt in (np.float32, np.float64)
    if not (fn == "fma" and dt == np.float64)
]


@pytest.mark.parametrize("fn,mode,dt", CASES, ids=[f"{f}_{m}_{d.__name__}" for f, m, d in CASES])
def test_directed_rounding_is_exact(backend, fn, mode, dt):
    rng = np.random.default_rng(7)
    n = 1000 + 13
    x = _random_floats(n, dt, rng)
    y = _random_floats(n, dt, rng)
    if fn in ("add", "sub"):  # near-cancellation too
        y[n // 2 :] = -x[n // 2 :] * dt(1 + 2**-10) if fn == "add" else x[n // 2 :] * dt(1 + 2**-10)
    if fn == "sqrt":
        x = np.abs(x)
    tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
    out = torch.full((n + 5,), 7.0, dtype=tx.dtype)
    binary_kernel[(triton.cdiv(n, 128),)](tx, ty, out, n, FN=fn, MODE=mode, BLOCK=128)
    assert (out[n:] == 7.0).all()
    got = out[:n].numpy()
    bad = []
    for i in range(n):
        if fn == "sqrt":
            want = _sqrt_round(x[i], dt, mode)
        else:
            exact = _exact(fn, x[i], y[i])
            if exact is None:
                continue
            want = _round(exact, dt, mode)
            if exact == 0 and fn in ("add", "sub", "fma"):
                want = _zero_sum(fn, x[i], y[i], mode)
        g = float(got[i])
        if not (g == want and (g != 0 or np.signbit(g) == np.signbit(want)) or np.isnan(g) and np.isnan(want)):
            bad.append((float(x[i]), float(y[i]), g, want))
    assert not bad, f"{len(bad)} wrong, first: {bad[:3]}"


@triton.jit
def convert_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if FN == "int2float_rd":
        r = libdevice.int2float_rd(x)
    elif FN == "int2float_ru":
        r = libdevice.int2float_ru(x)
    elif FN == "int2float_rz":
        r = libdevice.int2float_rz(x)
    elif FN == "ll2float_rd":
        r = libdevice.ll2float_rd(x)
    elif FN == "ll2double_ru":
        r = libdevice.ll2double_ru(x)
    elif FN == "ll2double_rz":
        r = libdevice.ll2double_rz(x)
    elif FN == "double2float_rd":
        r = libdevice.double2float_rd(x)
    elif FN == "double2float_ru":
        r = libdevice.double2float_ru(x)
    elif FN == "double2float_rz":
        r = libdevice.double2float_rz(x)
    elif FN == "float2int_rd":
        r = libdevice.float2int_rd(x)
    elif FN == "float2int_ru":
        r = libdevice.float2int_ru(x)
    elif FN == "float2ll_rn":
        r = libdevice.float2ll_rn(x)
    else:
        r = libdevice.double2uint_rz(x)
    tl.store(out_ptr + offs, r, mask=mask)


CONVERSIONS = {
    # name: (input dtype, output dtype, mode or None for float->int)
    "int2float_rd": (np.int32, np.float32, "rd"),
    "int2float_ru": (np.int32, np.float32, "ru"),
    "int2float_rz": (np.int32, np.float32, "rz"),
    "ll2float_rd": (np.int64, np.float32, "rd"),
    "ll2double_ru": (np.int64, np.float64, "ru"),
    "ll2double_rz": (np.int64, np.float64, "rz"),
    "double2float_rd": (np.float64, np.float32, "rd"),
    "double2float_ru": (np.float64, np.float32, "ru"),
    "double2float_rz": (np.float64, np.float32, "rz"),
    "float2int_rd": (np.float32, np.int32, np.floor),
    "float2int_ru": (np.float32, np.int32, np.ceil),
    "float2ll_rn": (np.float32, np.int64, np.rint),
    "double2uint_rz": (np.float64, np.uint32, np.trunc),
}


@pytest.mark.parametrize("fn", sorted(CONVERSIONS))
def test_conversions_are_exact(backend, fn):
    src, dst, mode = CONVERSIONS[fn]
    rng = np.random.default_rng(3)
    n = 777
    if np.issubdtype(src, np.integer):
        x = rng.integers(np.iinfo(src).min, np.iinfo(src).max, size=n, dtype=src)
        x[:4] = [np.iinfo(src).max, np.iinfo(src).min, 0, (1 << 24) + 1]
    else:
        x = _random_floats(n, src, rng)
        if not isinstance(mode, str):
            x = x * src(2.0**-100) if src == np.float64 else x
            x[8:16] = [2.5, -2.5, 1e30, -1e30, 4294967296.5, -0.5, 0.5, 3e9]
    out_dtype = {np.uint32: np.int32}.get(dst, dst)
    tx = torch.from_numpy(x.copy())
    out = torch.zeros(n, dtype=getattr(torch, np.dtype(out_dtype).name))
    convert_kernel[(triton.cdiv(n, 128),)](tx, out, n, FN=fn, BLOCK=128)
    got = out.numpy()
    if isinstance(mode, str):
        want = np.array(
            [_round(Fraction(int(v)) if np.issubdtype(src, np.integer) else Fraction(float(v)), dst, mode) for v in x]
        )
        np.testing.assert_array_equal(got.astype(np.float64), want)
    else:
        info = np.iinfo(dst)
        sat = [0 if np.isnan(v) else max(info.min, min(info.max, int(mode(np.float64(v))))) for v in x]
        want = np.array(sat, dtype=np.int64).astype(dst).astype(out_dtype)
        np.testing.assert_array_equal(got, want)


@triton.jit
def int_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    if FN == "brev":
        r = libdevice.brev(x)
    elif FN == "byte_perm":
        r = libdevice.byte_perm(x, y, z)
    elif FN == "ffs":
        r = libdevice.ffs(x)
    elif FN == "hadd":
        r = libdevice.hadd(x, y)
    elif FN == "rhadd":
        r = libdevice.rhadd(x, y)
    elif FN == "mul24":
        r = libdevice.mul24(x, y)
    elif FN == "mulhi":
        r = libdevice.mulhi(x, y)
    elif FN == "sad":
        r = libdevice.sad(x, y, z.to(tl.uint32))
    elif FN == "clz":
        r = libdevice.clz(x)
    else:
        r = libdevice.popc(x)
    tl.store(out_ptr + offs, r, mask=mask)


def _brev(v: np.ndarray, width: int) -> np.ndarray:
    u = v.astype(np.uint64) & np.uint64((1 << width) - 1)
    out = np.zeros_like(u)
    for b in range(width):
        out |= ((u >> np.uint64(b)) & np.uint64(1)) << np.uint64(width - 1 - b)
    return out


INT_REFS = {
    "brev": lambda x, y, z: _brev(x, 32).astype(np.uint32).view(np.int32),
    "byte_perm": lambda x, y, z: (
        np.array(
            [
                sum(
                    ((((int(b) & 0xFFFFFFFF) << 32 | (int(a) & 0xFFFFFFFF)) >> (8 * ((int(s) >> (4 * i)) & 7))) & 0xFF)
                    << (8 * i)
                    for i in range(4)
                )
                for a, b, s in zip(x, y, z)
            ],
            dtype=np.uint64,
        )
        .astype(np.uint32)
        .view(np.int32)
    ),
    "ffs": lambda x, y, z: np.array([(int(v) & -int(v)).bit_length() for v in x], dtype=np.int32),
    "hadd": lambda x, y, z: ((x.astype(np.int64) + y) >> 1).astype(np.int32),
    "rhadd": lambda x, y, z: ((x.astype(np.int64) + y + 1) >> 1).astype(np.int32),
    "mul24": lambda x, y, z: (
        ((((x.astype(np.int64) << 40) >> 40) * ((y.astype(np.int64) << 40) >> 40)) & 0xFFFFFFFF)
        .astype(np.uint32)
        .view(np.int32)
    ),
    "mulhi": lambda x, y, z: ((x.astype(np.int64) * y) >> 32).astype(np.int32),
    "sad": lambda x, y, z: (
        ((np.abs(x.astype(np.int64) - y) + z.astype(np.uint32)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    ),
    "clz": lambda x, y, z: np.array([32 - (int(v) & 0xFFFFFFFF).bit_length() for v in x], dtype=np.int32),
    "popc": lambda x, y, z: np.array([(int(v) & 0xFFFFFFFF).bit_count() for v in x], dtype=np.int32),
}


@pytest.mark.parametrize("fn", sorted(INT_REFS))
def test_integer_helpers(backend, fn):
    rng = np.random.default_rng(11)
    n = 555
    x, y, z = (rng.integers(-(2**31), 2**31 - 1, size=n, dtype=np.int32) for _ in range(3))
    x[:4] = [0, -1, -(2**31), 2**31 - 1]
    out = torch.zeros(n, dtype=torch.int32)
    int_kernel[(triton.cdiv(n, 128),)](*(torch.from_numpy(v.copy()) for v in (x, y, z)), out, n, FN=fn, BLOCK=128)
    np.testing.assert_array_equal(out.numpy(), INT_REFS[fn](x, y, z))


@triton.jit
def bessel_kernel(n_ptr, x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    k = tl.load(n_ptr + offs, mask=mask)
    if FN == "j0":
        r = libdevice.j0(x)
    elif FN == "j1":
        r = libdevice.j1(x)
    elif FN == "y0":
        r = libdevice.y0(x)
    elif FN == "y1":
        r = libdevice.y1(x)
    elif FN == "jn":
        r = libdevice.jn(k, x)
    else:
        r = libdevice.yn(k, x)
    tl.store(out_ptr + offs, r, mask=mask)


BESSEL = {
    "j0": lambda k, x: sp.j0(x),
    "j1": lambda k, x: sp.j1(x),
    "y0": lambda k, x: sp.y0(x),
    "y1": lambda k, x: sp.y1(x),
    "jn": lambda k, x: sp.jv(k, x),
    "yn": lambda k, x: sp.yn(k, x),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("fn", sorted(BESSEL))
def test_bessel_first_and_second_kind(backend, fn, dtype):
    """Absolute error relative to the function's scale max(1, |f|) (relative error is unbounded near zeros)."""
    rng = np.random.default_rng(5)
    n = 1203
    x = np.concatenate(
        [rng.uniform(-60, 60, n // 3), rng.uniform(0.01, 25, n // 3), rng.uniform(1e-6, 2, n - 2 * (n // 3))]
    )
    if fn.startswith("y"):
        x = np.abs(x) + 1e-3
    x = x.astype(dtype)
    k = rng.integers(-12, 13, size=n, dtype=np.int32)
    out = torch.zeros(n, dtype=torch.float32 if dtype == np.float32 else torch.float64)
    bessel_kernel[(triton.cdiv(n, 128),)](torch.from_numpy(k), torch.from_numpy(x), out, n, FN=fn, BLOCK=128)
    ref = BESSEL[fn](k.astype(np.float64), x.astype(np.float64))
    got = out.numpy().astype(np.float64)
    scale = np.maximum(1.0, np.abs(ref))
    err = np.abs(got - ref) / scale
    tol = 2e-6 if dtype == np.float32 else 2e-13
    worst = int(np.argmax(err))
    assert err.max() <= tol, f"{fn}: {err.max():.3g} at n={k[worst]} x={x[worst]!r}: {got[worst]!r} vs {ref[worst]!r}"
