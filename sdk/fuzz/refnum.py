"""Reference numerics in numpy, written from the formats' definitions: what the fuzzer's interpreter reference
computes where numpy's own semantics are not Triton's (tests the SDK's code against code that shares none of it).

- Every float value is decoded exactly to float64 (`decode`); a narrowing rounds the exact value once
  (`round_float`: nearest even or toward zero at the format's precision, subnormals included), so no double
  rounding (f64 -> bf16/fp8 included). Overflow: IEEE formats give inf (toward zero: the largest finite value);
  fp8 saturates to +-max, infinities included (PTX `cvt.rn.satfinite`, the SDK's documented conversion).
- Integers convert to floats from their exact value (64-bit ones in Python integers), rounded once.
- Float -> int, integer division/remainder and shifts follow Triton's CUDA path as the SDK documents it
  (sdk/transforms/int_semantics.py, recorded on an H200): x/0 and x%0 give all ones (0xFFFFFFFF for a 64-bit
  dividend that fits in 32 bits unsigned), INT_MIN/-1 wraps, INT_MIN%-1 is 0; shift amounts are unsigned, an
  amount >= the width gives 0 (arithmetic right shift: the sign fill), 64-bit shifts read the amount's low 32 bits;
  float -> int saturates through max(width, 16) bits (an 8-bit result is the low byte of the 16-bit one), NaN gives
  0, except from f64 or to a 64-bit integer: the sign-bit pattern.
"""

from __future__ import annotations

import numpy as np

from .dtypes import FORMATS, FP8, NUMPY, UINT_OF_BITS, bits, int_bounds, is_signed


def _fp8_table(name: str) -> np.ndarray:
    """The exact value of each of the 256 codes of an fp8 format (NaN codes: NaN)."""
    fmt = FORMATS[name]
    mbits = fmt.p - 1
    ebits = 7 - mbits
    bias = 1 - fmt.emin
    out = np.empty(256)
    for c in range(256):
        s = -1.0 if c & 0x80 else 1.0
        e = (c >> mbits) & ((1 << ebits) - 1)
        m = c & ((1 << mbits) - 1)
        if name == "float8e4nv" and (c & 0x7F) == 0x7F:
            out[c] = np.nan
        elif name == "float8e5" and e == (1 << ebits) - 1:
            out[c] = s * np.inf if m == 0 else np.nan
        elif e == 0:
            out[c] = s * m * 2.0 ** (fmt.emin - mbits)
        else:
            out[c] = s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return out


_FP8_VALUES = {n: _fp8_table(n) for n in FP8}
#: finite codes sorted by value (for encoding an exactly representable value); -0 maps to 0x80
_FP8_SORTED = {}
for _n, _t in _FP8_VALUES.items():
    _codes = np.array([c for c in range(256) if not np.isnan(_t[c]) and c != 0x80], dtype=np.int64)
    _order = np.argsort(_t[_codes], kind="stable")
    _FP8_SORTED[_n] = (_t[_codes][_order], _codes[_order])


def decode(a: np.ndarray, name: str) -> np.ndarray:
    """Storage (as `dtypes.NUMPY`) of a float dtype -> exact float64 values."""
    if name == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if name in FP8:
        return _FP8_VALUES[name][a.astype(np.int64)]
    with np.errstate(invalid="ignore"):  # a signaling NaN's payload is not a value
        return a.astype(np.float64)


def round_float(x: np.ndarray, name: str, rtz: bool = False) -> np.ndarray:
    """float64 values rounded once to format `name` (returned as float64, exactly representable, or +-inf/NaN)."""
    fmt = FORMATS[name]
    x = np.asarray(x, dtype=np.float64)
    if name == "float64":
        return x.copy()
    out = np.array(x, dtype=np.float64)
    fin = np.isfinite(x)
    ax = np.abs(x[fin])
    _, e = np.frexp(ax)  # ax = m * 2**e, 0.5 <= m < 1: the leading bit is 2**(e-1)
    q = np.maximum(e - 1, fmt.emin) - (fmt.p - 1)  # the exponent of the last kept bit
    scaled = np.ldexp(ax, -q)
    r = np.ldexp(np.floor(scaled) if rtz else np.rint(scaled), q)
    out[fin] = np.copysign(r, x[fin])
    big = np.abs(out) > fmt.max
    if fmt.saturate:
        out[big] = np.copysign(fmt.max, out[big])
    elif rtz:
        out[big & np.isfinite(x)] = np.copysign(fmt.max, out[big & np.isfinite(x)])
    else:
        out[big] = np.copysign(np.inf, out[big])
    return out


def encode(v: np.ndarray, name: str) -> np.ndarray:
    """Exactly representable float64 values (from `round_float`) -> storage of format `name`."""
    v = np.asarray(v, dtype=np.float64)
    if name in ("float16", "float32", "float64"):
        return v.astype(NUMPY[name])
    if name == "bfloat16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    shape, v = v.shape, v.reshape(-1)
    vals, codes = _FP8_SORTED[name]
    idx = np.clip(np.searchsorted(vals, v), 0, len(vals) - 1)
    out = codes[idx].astype(np.uint8)
    out[(v == 0) & np.signbit(v)] = 0x80
    out[np.isnan(v)] = 0x7F | (np.signbit(v[np.isnan(v)]).astype(np.uint8) << 7)
    if name == "float8e5":
        out[np.isinf(v)] = np.where(v[np.isinf(v)] > 0, 0x7C, 0xFC)
    return out.reshape(shape)


def convert_float(a: np.ndarray, src: str, dst: str, rtz: bool = False) -> np.ndarray:
    """Storage of `src` -> storage of `dst`, rounded once."""
    return encode(round_float(decode(a, src), dst, rtz), dst)


def _round_int(v: int, p: int) -> int:
    """A Python integer rounded to `p` significant bits, nearest even."""
    a = abs(v)
    n = a.bit_length()
    if n <= p:
        return v
    shift = n - p
    q, rem = a >> shift, a & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    r = q << shift
    return -r if v < 0 else r


def int_to_float(a: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Integers (or bools) -> storage of float `dst`, each rounded once from its exact value."""
    p = FORMATS[dst].p
    if a.dtype == np.bool_ or bits(src) <= 32:
        exact = a.astype(np.float64)  # exact: at most 32 bits
    else:
        exact = np.array([float(_round_int(int(v), min(p, 53))) for v in a.reshape(-1)], dtype=np.float64)
        exact = exact.reshape(a.shape)
    return encode(round_float(exact, dst), dst)


def _wrap(vals: np.ndarray, name: str) -> np.ndarray:
    """Python integers (object array) -> `name`'s storage, modulo 2**width."""
    w = bits(name)
    mask = (1 << w) - 1
    u = np.array([int(v) & mask for v in vals.reshape(-1)], dtype=np.uint64 if w == 64 else np.int64)
    return u.astype(UINT_OF_BITS[w]).view(NUMPY[name]).reshape(vals.shape)


def _ints(a: np.ndarray) -> np.ndarray:
    return a.astype(object)


def float_to_int(a: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Storage of float `src` -> integer `dst` as Triton's CUDA path converts (see the module docstring)."""
    x = decode(a, src)
    w = bits(dst)
    cw = max(w, 16)
    signed = is_signed(dst)
    lo, hi = (-(1 << (cw - 1)), (1 << (cw - 1)) - 1) if signed else (0, (1 << cw) - 1)
    nan = (1 << (cw - 1)) if (src == "float64" or cw == 64) else 0
    out = np.empty(x.shape, dtype=object)
    for i, v in enumerate(x.reshape(-1)):
        if np.isnan(v):
            r = nan
        elif v >= hi + 1:
            r = hi
        elif v <= lo:
            r = lo
        else:
            r = int(v)  # truncation toward zero; exact for a float64
        out.reshape(-1)[i] = r
    return _wrap(out, dst)


def _to_py(a: np.ndarray, name: str) -> np.ndarray:
    """Storage -> Python integers with `name`'s signedness."""
    return _ints(a.astype(NUMPY[name], copy=False))


def divide(x: np.ndarray, y: np.ndarray, name: str, rem: bool) -> np.ndarray:
    """Truncating `x / y` (or C's `x % y`) of integer storage, with the CUDA path's results for y == 0 and
    INT_MIN / -1."""
    x, y = np.broadcast_arrays(x, y)
    w = bits(name)
    lo, _ = int_bounds(name)
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (a, b) in enumerate(zip(_to_py(x, name).reshape(-1), _to_py(y, name).reshape(-1))):
        if b == 0:
            fits = w == 64 and 0 <= (a & ((1 << 64) - 1)) < (1 << 32)
            flat[i] = 0xFFFFFFFF if fits else -1
        elif is_signed(name) and a == lo and b == -1:
            flat[i] = 0 if rem else lo
        else:
            q = abs(a) // abs(b)
            q = -q if (a < 0) != (b < 0) else q
            flat[i] = a - q * b if rem else q
    return _wrap(out, name)


def shift(x: np.ndarray, y: np.ndarray, name: str, op: str) -> np.ndarray:
    """`x << y` (op "shl"), logical (`lshr`) or arithmetic (`ashr`) `x >> y` with the CUDA path's amounts."""
    x, y = np.broadcast_arrays(x, y)
    w = bits(name)
    wmask = (1 << w) - 1
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    xs = _to_py(x, name).reshape(-1)
    for i, (a, b) in enumerate(zip(xs, _to_py(y, name).reshape(-1))):
        amount = b & wmask  # unsigned
        if w == 64:
            amount &= 0xFFFFFFFF
        if op == "shl":
            flat[i] = 0 if amount >= w else a << amount
        elif op == "lshr":
            flat[i] = 0 if amount >= w else (a & wmask) >> amount
        else:
            s = a & wmask
            s = s - (1 << w) if s >> (w - 1) else s  # the bits read as signed
            flat[i] = s >> min(amount, w - 1)
    return _wrap(out, name)
