"""Triton's interpreter as the fuzzer's reference: where its numpy semantics are not Triton's, the builder methods
are replaced (in the interpreter worker process only) by the semantics the SDK's backends follow.

What is replaced, and why:

- bf16 and fp8 arithmetic, comparisons, negation, fma, clamp, sums, cumsums and dots: the interpreter holds them as
  uint16/uint8 and numpy would add the bit patterns. They are computed on the exact values (in f32, exact for
  these formats' +, -, *, min, max: f32 has more than twice their precision; fma exactly) and rounded once.
- Float conversions (f32 -> bf16 truncated instead of rounded; int -> bf16 and f64 -> bf16 as an integer cast):
  every conversion rounds the exact value once (refnum.py), fp8 saturating as PTX's `satfinite`.
- Integer x/0, x%0, INT_MIN/-1, shifts by >= the width, float -> int of NaN and out-of-range values: numpy gives
  0/warnings/platform results; these follow Triton's CUDA path as sdk/transforms/int_semantics.py documents it.
- Approximate operations compute in f64 and round once; with `RUN > 0` their results are perturbed (see below).
- min/max (minnumf/maxnumf, and the min/max reductions) of +0 and -0: either zero is right; runs > 0 pick the sign
  of such a result as they pick the direction of an approximation, so what depends on it is ill-conditioned. Their
  operands' signaling NaNs are made quiet first (numpy's fmax/fmin mishandle them).

Tolerance by perturbation. An implementation may round tl.exp, exp2, log, log2, sin, cos, sqrt, rsqrt, erf (by up
to the OpenCL 1.2 full-profile bounds, `APPROX_ULPS`), and may sum in any order (a sum or cumsum of n terms by up
to (n-1)·eps·Σ|x|, a dot of K products by K·(eps·Σ|a·b| + tiny), eps and tiny (the smallest subnormal: a
product that underflows loses up to half of it) of the result's format). Reference run 0 is exact;
runs 1..K move every such result by its full bound: run 1 up, run 2 down, runs 3 and 4 alternately (each result the
other way from the one before it, so that two chained approximations such as `rsqrt(sin(x))` also move in opposite
directions, which all-up and all-down runs cancel), the others a random sign per element.
Everything downstream (cancellation, rounding to a narrow format, a comparison or float -> int near a boundary)
sees the moved values, so the runs' spread is the output's tolerance, and an element whose runs disagree on NaN,
inf, an integer or a bool is ill-conditioned and not compared (compare.py).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import ClassVar

import numpy as np
import triton.language as tl
from triton._C.libtriton import ir as _ir
from triton.runtime import interpreter as I

from . import dtypes as D
from . import refnum as R

TL_NAME = {getattr(tl, n): n for n in D.ALL}
TL_NAME[tl.int1] = D.BOOL
LOW = ("bfloat16",) + D.FP8
#: ulps an implementation may be off for each approximate function (OpenCL 1.2 full profile, f32 and f64)
APPROX_ULPS = {"exp": 3, "exp2": 3, "log": 3, "log2": 3, "sin": 4, "cos": 4, "sqrt": 3, "rsqrt": 2, "erf": 16}


class _State:
    run = 0
    rng = np.random.default_rng(0)
    #: approximate results moved so far in this run: runs 3 and 4 alternate the direction by it
    moved = 0
    #: the sources of run 0's float -> 8-bit conversions, in program order, and how many this run has made
    narrow_sources: ClassVar[list[np.ndarray]] = []
    narrow_calls = 0


STATE = _State()


def set_run(run: int) -> None:
    """Select reference run `run` (0: exact; >0: approximate results moved by their bounds)."""
    STATE.run = run
    STATE.rng = np.random.default_rng(run)
    STATE.moved = 0
    STATE.narrow_calls = 0
    if run == 0:
        STATE.narrow_sources = []


def _signs(shape: tuple[int, ...]) -> np.ndarray | float:
    if STATE.run == 1:
        return 1.0
    if STATE.run == 2:
        return -1.0
    STATE.moved += 1
    if STATE.run in (3, 4):
        return (-1.0) ** (STATE.moved + STATE.run)
    return STATE.rng.choice([-1.0, 1.0], size=shape)


def _perturb_rel(y: np.ndarray, ulps: float, name: str) -> np.ndarray:
    if STATE.run == 0:
        return y
    return y * (1.0 + _signs(y.shape) * ulps * D.FORMATS[name].eps)


def _perturb_abs(y: np.ndarray, bound: np.ndarray) -> np.ndarray:
    if STATE.run == 0:
        return y
    bound = np.where(np.isfinite(y) & np.isfinite(bound), bound, 0.0)
    return y + _signs(np.shape(y)) * bound


def _overflow_unstable(y: np.ndarray, scale: np.ndarray, name: str, infinite: np.ndarray | bool = False) -> np.ndarray:
    """Where a sum's magnitudes could overflow the format partway (Σ|x| beyond its largest value), whether it does
    depends on the order; in a saturating format (fp8: every addition's result is narrowed with satfinite, as on
    the CUDA path) an infinite term is saturated away or not by the order too (inf + -inf: NaN exactly, a finite
    value once +inf has been narrowed to +max). The perturbed runs give NaN there (run 1) and 0.0 (the others), so
    the runs disagree on NaN and compare.py skips those elements whatever run 0 is."""
    if STATE.run == 0:
        return y
    fmt = D.FORMATS[name]
    unstable = (np.asarray(scale) > fmt.max) | (np.asarray(infinite) & fmt.saturate)
    return np.where(unstable, np.nan if STATE.run == 1 else 0.0, y)


def _name(h: I.TensorHandle) -> str | None:
    return TL_NAME.get(h.dtype.scalar if hasattr(h.dtype, "scalar") else h.dtype)


def _handle(data: np.ndarray, name: str) -> I.TensorHandle:
    return I.TensorHandle(np.asarray(data).astype(D.NUMPY[name], copy=False), getattr(tl, name))


def _wide(h: I.TensorHandle) -> I.TensorHandle:
    return _handle(R.decode(h.data, _name(h)).astype(np.float32), "float32")


def _lowp(orig, handles: int):
    """`orig` on f32 copies of bf16/fp8 operands, its float result rounded once back to their format."""

    def method(self, *args):
        hs, rest = args[:handles], args[handles:]
        low = next((_name(h) for h in hs if _name(h) in LOW), None)
        if low is None:
            return orig(self, *args)
        r = orig(self, *[_wide(h) if _name(h) in LOW else h for h in hs], *rest)
        if r.data.dtype == np.bool_:
            return r
        return _handle(R.encode(R.round_float(r.data.astype(np.float64), low), low), low)

    return method


def _fneg(self, arg):
    name = _name(arg)
    if name in LOW:
        w = D.bits(name)
        return _handle(arg.data ^ D.UINT_OF_BITS[w](1 << (w - 1)), name)
    return self.unary_op(arg, np.negative)


def _exact_fma(x: float, y: float, z: float) -> float:
    """fma of three finite floats, rounded to float64 by rounding to odd (so one more rounding to a format of at
    most 51 bits is exact)."""
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        return math.copysign(0.0, x * y + z)
    f = float(exact)
    if Fraction(f) != exact and int.from_bytes(np.float64(f).tobytes(), "little") & 1 == 0:
        f = float(np.nextafter(f, math.inf if Fraction(f) < exact else -math.inf))
    return f


def _fma(orig):
    def method(self, x, y, z):
        name = _name(z)
        if name in ("float32", "float64"):
            return orig(self, x, y, z)
        a, b, c = np.broadcast_arrays(*(R.decode(h.data, name) for h in (x, y, z)))
        out = a * b + c  # right for the non-finite cases
        fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & np.isfinite(out)
        flat = out.reshape(-1).copy()
        for i in np.flatnonzero(fin.reshape(-1)):
            flat[i] = _exact_fma(float(a.reshape(-1)[i]), float(b.reshape(-1)[i]), float(c.reshape(-1)[i]))
        return _handle(R.encode(R.round_float(flat.reshape(out.shape), name), name), name)

    return method


def _fp_to_fp(self, src, dst_type, rounding_mode=None):
    dst = TL_NAME[dst_type.scalar]
    rtz = rounding_mode == _ir.ROUNDING_MODE.RTZ
    return _handle(R.convert_float(src.data, _name(src), dst, rtz), dst)


def _fp_cast(self, src, dst_type):
    return _fp_to_fp(self, src, dst_type)


def _int_to_fp(self, src, dst_type):
    dst = TL_NAME[dst_type.scalar]
    return _handle(R.int_to_float(src.data, _name(src), dst), dst)


def _fp_to_int(self, src, dst_type):
    """An 8-bit result is the low byte of a 16-bit conversion, which wraps every 256 steps of its source: where a
    perturbed run moved an out-of-range source, the runs' ends no longer bound the values between them (the byte is
    not monotonic), so each run gives such an element another byte, and what depends on it is ill-conditioned."""
    dst = TL_NAME[dst_type.scalar]
    out = R.float_to_int(src.data, _name(src), dst)
    if D.bits(dst) != 8:
        return _handle(out, dst)
    x = R.decode(src.data, _name(src))
    k, STATE.narrow_calls = STATE.narrow_calls, STATE.narrow_calls + 1
    if STATE.run == 0:
        STATE.narrow_sources.append(x.copy())
    elif k < len(STATE.narrow_sources) and STATE.narrow_sources[k].shape == x.shape:
        x0 = STATE.narrow_sources[k]
        lo, hi = (-128, 127) if D.is_signed(dst) else (0, 255)
        with np.errstate(invalid="ignore"):
            outside = (x < lo) | (x > hi + 1) | (x0 < lo) | (x0 > hi + 1)
            moved = (x != x0) & ~(np.isnan(x) & np.isnan(x0))
        flip = moved & outside
        if flip.any():  # any byte is possible there: each run takes another, small and extreme ones
            bytes_ = (1, -1, 127, -128, 0) if D.is_signed(dst) else (1, 255, 128, 0, 2)
            out = np.where(flip, np.asarray(bytes_[STATE.run % len(bytes_)]).astype(out.dtype), out)
    return _handle(out, dst)


def _divide(rem: bool):
    def method(self, lhs, rhs):
        name = _name(lhs)
        return _handle(R.divide(lhs.data, rhs.data, name, rem), name)

    return method


def _shift(op: str):
    def method(self, lhs, rhs):
        name = _name(lhs)
        return _handle(R.shift(lhs.data, rhs.data, name, op), name)

    return method


def _approx(fn: str, f64_fn):
    def method(self, arg):
        name = _name(arg)
        with np.errstate(all="ignore"):
            y = f64_fn(arg.data.astype(np.float64))
        ulps = APPROX_ULPS.get(fn, 0) + (1 if name == "float64" else 0)
        if ulps:
            y = _perturb_rel(y, ulps, name)
        return _handle(R.encode(R.round_float(y, name), name), name)

    return method


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _dot(self, a, b, d, input_precision=None, max_num_imprecise_acc=None):
    an, dn = _name(a), _name(d)
    if not D.is_float(an):
        acc = a.data.astype(np.int64) @ b.data.astype(np.int64) + d.data.astype(np.int64)
        return _handle(acc.astype(np.uint64).astype(D.UINT_OF_BITS[D.bits(dn)]).view(D.NUMPY[dn]), dn)
    x, y = R.decode(a.data, an), R.decode(b.data, _name(b))
    with np.errstate(all="ignore"):
        acc = x @ y + R.decode(d.data, dn)
        scale = np.where(np.isfinite(x), np.abs(x), 0.0) @ np.where(np.isfinite(y), np.abs(y), 0.0)
        # each of the K products (or fmas) may also lose half a subnormal spacing where it underflows (fuzz seed
        # 306 kernel 17: products of normals and subnormals, 2 subnormal ulps off on both backends)
        fmt = D.FORMATS[dn]
        bound = x.shape[-1] * (fmt.eps * scale + fmt.tiny)
        acc = _overflow_unstable(_perturb_abs(acc, bound), scale, dn)
    return _handle(R.encode(R.round_float(acc, dn), dn), dn)


def _sum(orig):
    def method(self, input):
        name = TL_NAME.get(input.dtype)
        if name is None or not D.is_float(name):
            return orig(self, input)
        x = R.decode(input.handle.data, name)
        with np.errstate(all="ignore"):
            s = np.sum(x, axis=self.axis, keepdims=self.keep_dims)
            fin = np.where(np.isfinite(x), np.abs(x), 0.0)
            n = x.size if self.axis is None else x.shape[self.axis]
            scale = np.sum(fin, axis=self.axis, keepdims=self.keep_dims)
            bound = max(n - 1, 0) * D.FORMATS[name].eps * scale
            infinite = np.isinf(x).any(axis=self.axis, keepdims=self.keep_dims)
            s = _overflow_unstable(_perturb_abs(np.asarray(s), np.asarray(bound)), scale, name, infinite & (n > 1))
        # the sum of one element is that element, no addition rounded (a saturating format keeps its infinity)
        s = R.encode(np.asarray(s) if n == 1 else R.round_float(s, name), name)
        return self.to_tensor(s, input.dtype)

    return method


def _cumsum(orig):
    def method(self, input):
        name = TL_NAME.get(input.dtype)
        if name is None or not D.is_float(name):
            return orig(self, input)
        x = R.decode(input.handle.data, name)
        with np.errstate(all="ignore"):
            c = np.cumsum(x, axis=self.axis)
            steps = np.arange(x.shape[self.axis]).reshape([-1 if i == self.axis else 1 for i in range(x.ndim)])
            scale = np.cumsum(np.where(np.isfinite(x), np.abs(x), 0.0), axis=self.axis)
            infinite = np.logical_or.accumulate(np.isinf(x), axis=self.axis) & (steps > 0)
            c = _overflow_unstable(_perturb_abs(c, steps * D.FORMATS[name].eps * scale), scale, name, infinite)
        # a scan's first element is its input, no addition rounded (a saturating format keeps its infinity)
        c = R.encode(np.where(steps == 0, x, R.round_float(c, name)), name)
        return [self.to_tensor(c, input.dtype)]

    return method


def _min_max(orig):
    """argmin/argmax of bf16/fp8 (which tl.argmax does not widen first) on the values, not the bit patterns."""

    def method(self, input, val_reduce_op, idx_reduce_op=None):
        x = input[0] if isinstance(input, tuple) else input
        name = TL_NAME.get(x.dtype)
        if name not in LOW:
            x = tl.core.tensor(_quiet(x.handle), x.type)
            out = orig(self, x, val_reduce_op, idx_reduce_op)
            if val_reduce_op is None or name not in D.FLOATS:
                return out
            vals = out if not isinstance(out, tuple) else out[0]
            data = vals.handle.data
            fixed = _reduced_zero_sign_free(data.astype(np.float64), x.handle.data, self.axis, self.keep_dims)
            fixed = np.asarray(fixed).astype(data.dtype)
            vals = self.to_tensor(fixed.reshape(data.shape) if vals.shape else fixed.reshape(()), x.dtype)
            return (vals, out[1]) if isinstance(out, tuple) else vals
        wide = tl.core.tensor(_wide(x.handle), tl.block_type(tl.float32, list(x.shape)) if x.shape else tl.float32)
        out = orig(self, wide, val_reduce_op, idx_reduce_op)
        vals = out if not isinstance(out, tuple) else out[0]
        if val_reduce_op is None:
            return out
        wide_vals = vals.handle.data.astype(np.float64)
        wide_vals = _reduced_zero_sign_free(wide_vals, _wide(x.handle).data, self.axis, self.keep_dims)
        enc = R.encode(R.round_float(np.asarray(wide_vals), name), name)
        vals = self.to_tensor(enc.reshape(vals.handle.data.shape) if vals.shape else enc.reshape(()), x.dtype)
        return (vals, out[1]) if isinstance(out, tuple) else vals

    return method


def _quiet(h: I.TensorHandle) -> I.TensorHandle:
    """`h` with signaling NaNs made quiet (sign kept). numpy's fmax/fmin, behind the interpreter's maxnumf/minnumf
    and tl.max/tl.min (nanmax), mishandle them on AVX-512: a column holding an sNaN, -inf and +inf reduced to 0.0;
    the hardware's maxnum treats an sNaN as a NaN, ignored like any other."""
    data = h.data
    if data.dtype.kind != "f" or not np.isnan(data).any():
        return h
    return I.TensorHandle(np.where(np.isnan(data), np.copysign(np.nan, data).astype(data.dtype), data), h.dtype)


def _zero_sign_free(orig):
    """minnumf/maxnumf of +0 and -0 may return either zero (LLVM's minnum/maxnum, IEEE 754's minNum): runs > 0
    give such an element the sign `_signs` picks, so a value that depends on it (rsqrt(min(-0, +0)) is +-inf) is
    ill-conditioned instead of held to the interpreter's choice."""

    def method(self, lhs, rhs):
        lhs, rhs = _quiet(lhs), _quiet(rhs)
        r = orig(self, lhs, rhs)
        name = _name(r)
        if STATE.run == 0 or name is None or name not in D.FLOATS:
            return r
        a, b = R.decode(lhs.data, _name(lhs)), R.decode(rhs.data, _name(rhs))
        a, b = np.broadcast_arrays(a, b)
        free = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
        if not free.any():
            return r
        v = np.where(free, np.copysign(0.0, _signs(free.shape)), R.decode(r.data, name))
        return _handle(R.encode(v, name), name)

    return method


def _reduced_zero_sign_free(vals: np.ndarray, x: np.ndarray, axis: int | None, keep: bool) -> np.ndarray:
    """A min/max reduction whose result is a zero while its row holds zeros of both signs: either sign (runs > 0
    pick one by `_signs`)."""
    if STATE.run == 0:
        return vals
    zero = x == 0
    both = (zero & np.signbit(x)).any(axis=axis, keepdims=keep) & (zero & ~np.signbit(x)).any(axis=axis, keepdims=keep)
    free = both & (vals == 0)
    if not np.any(free):
        return vals
    return np.where(free, np.copysign(0.0, _signs(np.shape(free))), vals)


def _get_bf16(self, value):
    """Stock Triton's frontend builds a bf16 constant from C++'s `std::to_string(float(v))` (six decimals): a
    literal below 5e-7 becomes 0 and 2**-20 becomes bf16(1e-6), on every backend (CUDA too). The reference
    reproduces that rather than report it against each backend."""
    text = f"{float(np.float32(value)):f}"  # C's %f, as std::to_string
    return _handle(R.encode(R.round_float(np.array([float(text)]), "bfloat16"), "bfloat16"), "bfloat16")


def _get_fp16(self, value):
    """`get_fp16` takes a C++ float: the literal is rounded to f32 first, then to f16."""
    return _handle(np.array([np.float32(value)]).astype(np.float16), "float16")


_installed = False


def install() -> None:
    """Replace the interpreter's methods in this process (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    B = I.InterpreterBuilder
    binary = ["fadd", "fsub", "fmul", "fdiv", "frem", "precise_divf", "minimumf", "maximumf", "minnumf", "maxnumf"]
    binary += [f"fcmp{p}" for p in ("OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ", "UNE")]
    for m in binary:
        setattr(B, f"create_{m}", _lowp(getattr(B, f"create_{m}"), 2))
    for m in ("minnumf", "maxnumf"):
        setattr(B, f"create_{m}", _zero_sign_free(getattr(B, f"create_{m}")))
    B.create_clampf = _lowp(B.create_clampf, 3)
    B.create_fneg = _fneg
    B.create_fma = _fma(B.create_fma)
    B.create_fp_to_fp = _fp_to_fp
    B.create_fp_trunc = _fp_cast
    B.create_fp_ext = _fp_cast
    B.create_si_to_fp = _int_to_fp
    B.create_ui_to_fp = _int_to_fp
    B.create_fp_to_si = _fp_to_int
    B.create_fp_to_ui = _fp_to_int
    B.create_sdiv = B.create_udiv = _divide(False)
    B.create_srem = B.create_urem = _divide(True)
    B.create_shl, B.create_lshr, B.create_ashr = _shift("shl"), _shift("lshr"), _shift("ashr")
    fns = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos}
    fns |= {"sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "erf": _erf}
    for fn, f64_fn in fns.items():
        setattr(B, f"create_{fn}", _approx(fn, f64_fn))
    B.create_precise_sqrt = _approx("sqrt_rn", np.sqrt)
    B.create_dot = _dot
    B.get_bf16 = _get_bf16
    B.get_fp16 = _get_fp16
    I.ReduceOps.sum = _sum(I.ReduceOps.sum)
    I.ReduceOps.min_max = _min_max(I.ReduceOps.min_max)
    I.ScanOps.cumsum = _cumsum(I.ScanOps.cumsum)
