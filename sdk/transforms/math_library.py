"""Triton's libdevice (`__nv_*`) functions → SDK ops, C math functions (`libm.*`) or portable expansions: one table.

`triton.language.extra.libdevice` resolves to CUDA's libdevice module for SDK backends, so kernels call its 313
`__nv_*` functions through `tt.extern_elementwise`. `LIBRARY` maps every one of them to
 (a) an SDK op (`math.exp`, `arith.addf`, casts, ...),
 (b) a `libm.*` op (sdk/ir/dialects/libm.py) that backends render as the C / OpenCL C function of that name, or
 (c) an expansion in SDK IR ops (math_library_special.py, math_library_rounding.py, the integer helpers below),
each with its accuracy stated. `REFUSED` names what is not done, with the reason. The `math-library` pass rewrites
the extern ops before any backend rule runs; a `libm.*` op whose class has no rule of its own in the backend's
table, and that has a portable expansion (`LIBM_EXPANSIONS`), is expanded: a backend with a native intrinsic
overrides by rule. Symbols outside libdevice (native plugins, C functions) are left to the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.core import Module, Op, Value
from ..ir.dialects import libm as L
from ..ir.types import FloatType, IntType, Type, f64, i32, i64
from ..lowering import RuleTable
from ..pipeline import PassContext, ir_pass
from . import math_library_bessel as B
from . import math_library_rounding as R
from . import math_library_special as S
from .build import replace, shaped
from .math_library_build import I, MathBuilder

Build = Callable[[MathBuilder, list[Value], Type], Value]


@dataclass(frozen=True)
class MathFunction:
    """How one `__nv_*` symbol is computed, and how accurately."""

    symbol: str
    build: Build
    accuracy: str
    kind: str  # "op" (a), "libm" (b) or "expansion" (c)


LIBRARY: dict[str, MathFunction] = {}
#: libdevice symbols not compiled, with the reason
REFUSED: dict[str, str] = {}

DEVICE = "device's C99 {}"


def _add(symbol: str, build: Build, accuracy: str, kind: str) -> None:
    assert symbol not in LIBRARY, symbol
    LIBRARY[symbol] = MathFunction(symbol, build, accuracy, kind)


def _variants(base: str, f32_name: str | None, f64_name: str | None) -> list[str]:
    """The libdevice names of a function's f32 and f64 versions: "" is the default (`<base>f`, `<base>`), None
    means libdevice has no such version."""
    out = []
    if f32_name is not None:
        out.append("__nv_" + (f32_name or base + "f"))
    if f64_name is not None:
        out.append("__nv_" + (f64_name or base))
    return out


def _op(cls: type[Op], base: str, accuracy: str | None = None, f32_name: str | None = "", f64_name: str | None = ""):
    """An SDK op of the operands' type, f32 (`<base>f`) and f64 (`<base>`) versions."""
    acc = accuracy or DEVICE.format(base)
    for sym in _variants(base, f32_name, f64_name):
        _add(sym, lambda m, a, t, cls=cls: m.make(cls, a, a[0].type), acc, "op")


def _libm(cls: type[L.LibmOp], base: str | None = None) -> None:
    """A C math function; the accuracy is the device's, or its portable expansion's where the backend lacks it."""
    base = base or cls.function
    acc = DEVICE.format(cls.function)
    if cls in LIBM_EXPANSIONS:
        acc += f"; where the backend has no {cls.name} rule: {LIBM_EXPANSIONS[cls][1]}"
    for sym in _variants(base, "", ""):
        _add(sym, lambda m, a, t, cls=cls: m.make(cls, a, m_shape(a, t)), acc, "libm")


def _both(base: str, build: Build, accuracy: str, f32_name: str | None = "", f64_name: str | None = "") -> None:
    for sym in _variants(base, f32_name, f64_name):
        _add(sym, build, accuracy, "expansion")


def m_shape(args: list[Value], elem: Type) -> Type:
    """`elem` in the operands' shape (scalar or tensor)."""
    return shaped(args[0].type, elem)


# ---- (a) SDK ops ------------------------------------------------------------------------------------------------------

for _cls, _base in [
    (O.Acos, "acos"),
    (O.Acosh, "acosh"),
    (O.Asin, "asin"),
    (O.Asinh, "asinh"),
    (O.Atan, "atan"),
    (O.Atanh, "atanh"),
    (O.Cbrt, "cbrt"),
    (O.Cos, "cos"),
    (O.Cosh, "cosh"),
    (O.Erf, "erf"),
    (O.Erfc, "erfc"),
    (O.PreciseExp, "exp"),  # libdevice's exp is precise where Triton's CUDA path approximates tl.exp (ex2.approx)
    (O.Exp2, "exp2"),
    (O.Expm1, "expm1"),
    (O.Log, "log"),
    (O.Log10, "log10"),
    (O.Log1p, "log1p"),
    (O.Log2, "log2"),
    (O.Sin, "sin"),
    (O.Sinh, "sinh"),
    (O.Tan, "tan"),
    (O.Tanh, "tanh"),
    (O.Atan2, "atan2"),
    (O.PowF, "pow"),
    (O.Rsqrt, "rsqrt"),
]:
    _op(_cls, _base)
_op(O.Ceil, "ceil", "exact")
_op(O.Floor, "floor", "exact")
_op(O.Trunc, "trunc", "exact")
_op(O.Round, "round", "exact (halves away from zero)")
_op(O.RoundEven, "rint", "exact")
_op(O.RoundEven, "nearbyint", "exact")
_op(O.AbsF, "fabs", "exact")
_op(O.CopySign, "copysign", "exact")
_op(O.RemF, "fmod", "exact (C fmod)")
_op(O.PreciseSqrt, "sqrt", "correctly rounded")
_op(O.PreciseSqrt, "sqrt_rn", "correctly rounded", f32_name="fsqrt_rn", f64_name="dsqrt_rn")
_op(O.Fma, "fma", "correctly rounded (one rounding)")
_op(O.Fma, "fma_rn", "correctly rounded (one rounding)", f32_name="fmaf_rn")
_op(O.Rsqrt, "rsqrt_rn", f32_name="frsqrt_rn", f64_name=None)
for _pre, _cls in [("add", O.AddF), ("sub", O.SubF), ("mul", O.MulF), ("div", O.PreciseDivF)]:
    _op(_cls, _pre, "correctly rounded", f32_name=f"f{_pre}_rn", f64_name=f"d{_pre}_rn")
_both(
    "rcp_rn",
    lambda m, a, t: m.div(1.0, a[0]),
    "correctly rounded",
    f32_name="frcp_rn",
    f64_name="drcp_rn",
)

# fast_* variants: computed at the full accuracy of the function they approximate
for _cls, _base in [
    (O.Cos, "cos"),
    (O.Sin, "sin"),
    (O.Tan, "tan"),
    (O.Exp, "exp"),
    (O.Log, "log"),
    (O.Log2, "log2"),
    (O.Log10, "log10"),
    (O.PowF, "pow"),
]:
    _op(_cls, _base, DEVICE.format(_base) + " (full accuracy)", f32_name=f"fast_{_base}f", f64_name=None)
_op(O.DivF, "fdividef", "division (full accuracy)", f32_name="fast_fdividef", f64_name=None)
_add("__nv_fast_exp10f", lambda m, a, t: m.make(L.Exp10, a, a[0].type), DEVICE.format("exp10"), "libm")

#: portable expansions of `libm.*` ops, used where the backend has no rule for the op's own class, with their accuracy
_BESSEL_ACC = "absolute: ≤ 2e-13 (f64) / 2e-6 (f32) × max(1, |f|), measured against scipy"
LIBM_EXPANSIONS: dict[type[Op], tuple[Callable[[MathBuilder, list[Value]], Value], str]] = {
    L.SinPi: (lambda m, a: S.sinpi(m, a[0]), "≤ 2 ulp (exact argument reduction)"),
    L.CosPi: (lambda m, a: S.cospi(m, a[0]), "≤ 2 ulp (exact argument reduction)"),
    L.J0: (lambda m, a: B.bessel_j(m, 0, a[0]), _BESSEL_ACC),
    L.J1: (lambda m, a: B.bessel_j(m, 1, a[0]), _BESSEL_ACC),
    L.Y0: (lambda m, a: B.bessel_y(m, 0, a[0]), _BESSEL_ACC),
    L.Y1: (lambda m, a: B.bessel_y(m, 1, a[0]), _BESSEL_ACC),
    L.Jn: (lambda m, a: B.bessel_jn(m, a[0], a[1]), _BESSEL_ACC + "; |n| ≤ 32, NaN beyond"),
    L.Yn: (lambda m, a: B.bessel_yn(m, a[0], a[1]), _BESSEL_ACC + "; |n| ≤ 32, NaN beyond"),
}


# ---- (b) C math functions -------------------------------------------------------------------------------------------

for _cls in (L.Exp10, L.Lgamma, L.Tgamma, L.Logb, L.Hypot, L.Remainder, L.NextAfter, L.Ldexp):
    _libm(_cls)
_libm(L.Ldexp, "scalbn")
for _cls in (L.J0, L.J1, L.Y0, L.Y1, L.Jn, L.Yn, L.SinPi, L.CosPi):
    _libm(_cls)

# ---- (c) expansions: float --------------------------------------------------------------------------------------------

_both("fdim", lambda m, a, t: S.fdim(m, a[0], a[1]), "exact")
_both("ilogb", lambda m, a, t: S.ilogb(m, a[0]), "exact (ilogb(0) = INT_MIN, NaN → INT_MIN, inf → INT_MAX)")
_both("rcbrt", lambda m, a, t: m.div(1.0, m.un(O.Cbrt, a[0])), "≤ 1 ulp + device cbrt's error (≤ 2 f32 / 4 f64 here)")
_both("rhypot", lambda m, a, t: m.div(1.0, m.make(L.Hypot, a, a[0].type)), "≤ 1 ulp + device hypot's error")
_both("norm3d", lambda m, a, t: S.norm(m, a), "≤ 2 ulp (hypot of hypots: no overflow)")
_both("norm4d", lambda m, a, t: S.norm(m, a), "≤ 2 ulp (hypot of hypots: no overflow)")
_both("rnorm3d", lambda m, a, t: m.div(1.0, S.norm(m, a)), "≤ 3 ulp")
_both("rnorm4d", lambda m, a, t: m.div(1.0, S.norm(m, a)), "≤ 3 ulp")
_both("saturate", lambda m, a, t: S.saturate(m, a[0]), "exact (NaN → 0)", f64_name=None)
_both("powi", lambda m, a, t: S.powi(m, a[0], a[1]), "device's pow (sign from the integer's parity)")
_both("erfcx", lambda m, a, t: S.erfcx(m, a[0]), "≤ 4 ulp f32 / ≤ 8 ulp f64 (no overflow for large x)")
_both("erfinv", lambda m, a, t: S.erfinv(m, a[0]), "≤ 4 ulp (Newton-refined)")
_both("erfcinv", lambda m, a, t: S.erfcinv(m, a[0]), "≤ 4 ulp, relative, down to the smallest subnormal")
_both("normcdf", lambda m, a, t: S.normcdf(m, a[0]), "≤ 4 ulp + device erfc's error, relative in the tail")
_both("normcdfinv", lambda m, a, t: S.normcdfinv(m, a[0]), "≤ 5 ulp")
_both("cyl_bessel_i0", lambda m, a, t: S.bessel_i(m, a[0], 0), "≤ 8 ulp (series / asymptotic expansion)")
_both("cyl_bessel_i1", lambda m, a, t: S.bessel_i(m, a[0], 1), "≤ 8 ulp (series / asymptotic expansion)")
_add(
    "__nv_rcp64h",
    lambda m, a, t: S.rcp64h(m, a[0]),
    "1/x correctly rounded, low 32 bits of the result cleared (CUDA's MUFU.RCP64H differs in those bits)",
    "expansion",
)

# ---- (c) expansions: predicates and bit casts --------------------------------------------------------------------------

for _sym, _pred in [
    ("__nv_isnanf", lambda m, x: m.is_nan(x)),
    ("__nv_isnand", lambda m, x: m.is_nan(x)),
    ("__nv_isinff", lambda m, x: m.is_inf(x)),
    ("__nv_isinfd", lambda m, x: m.is_inf(x)),
    ("__nv_finitef", lambda m, x: m.is_finite(x)),
    ("__nv_isfinited", lambda m, x: m.is_finite(x)),
    ("__nv_signbitf", lambda m, x: m.signbit(x)),
    ("__nv_signbitd", lambda m, x: m.signbit(x)),
]:
    _add(_sym, lambda m, a, t, p=_pred: m.zext32(p(m, a[0])), "exact", "expansion")

for _sym in (
    "__nv_float_as_int",
    "__nv_float_as_uint",
    "__nv_int_as_float",
    "__nv_uint_as_float",
    "__nv_double_as_longlong",
    "__nv_longlong_as_double",
):
    _add(_sym, lambda m, a, t: m.cast(O.ArithBitcast, a[0], t), "exact", "expansion")
_add(
    "__nv_double2hiint",
    lambda m, a, t: m.cast(O.TruncI, m.ibin(O.ShRUI, m.bits(a[0]), 32), i32),
    "exact",
    "expansion",
)
_add("__nv_double2loint", lambda m, a, t: m.cast(O.TruncI, m.bits(a[0]), i32), "exact", "expansion")
_add(
    "__nv_hiloint2double",
    lambda m, a, t: m.from_bits(
        m.ibin(O.OrI, m.ibin(O.ShLI, m.cast(O.ExtUI, a[0], i64), 32), m.cast(O.ExtUI, a[1], i64)), f64
    ),
    "exact",
    "expansion",
)

# ---- (c) expansions: integers -------------------------------------------------------------------------------------------


def _brev(m: MathBuilder, x: Value) -> Value:
    """Bit reversal by swapping ever larger groups: 1, 2, 4, 8, 16 (and 32) bits."""
    width = x.type.element.width
    shift = 1
    while shift < width:
        mask = sum(((1 << shift) - 1) << k for k in range(0, width, 2 * shift))
        lo = m.ibin(O.ShLI, m.ibin(O.AndI, x, mask), shift)
        hi = m.ibin(O.AndI, m.ibin(O.ShRUI, x, shift), mask)
        x = m.ibin(O.OrI, lo, hi)
        shift *= 2
    return x


def _byte_perm(m: MathBuilder, x: Value, y: Value, s: Value) -> Value:
    """Byte i of the result is byte (s >> 4i) & 7 of the 8-byte value y:x."""
    both = m.ibin(O.OrI, m.ibin(O.ShLI, m.cast(O.ExtUI, y, i64), 32), m.cast(O.ExtUI, x, i64))
    out = m.c(0, x)
    for i in range(4):
        sel = m.ibin(O.AndI, m.ibin(O.ShRUI, s, 4 * i), 7)
        at = m.ibin(O.ShLI, m.cast(O.ExtUI, sel, i64), 3)
        byte = m.cast(O.TruncI, m.ibin(O.AndI, m.ibin(O.ShRUI, both, at), 0xFF), i32)
        out = m.ibin(O.OrI, out, m.ibin(O.ShLI, byte, 8 * i))
    return out


def _mulhi_signed(m: MathBuilder, a: Value, b: Value) -> Value:
    """High half of the signed product: the unsigned one minus b where a < 0 and a where b < 0 (mod 2^w)."""
    hi = m.ibin(O.MulhiUI, a, b)
    zero = m.c(0, a)
    hi = m.ibin(O.SubI, hi, m.where(m.icmp(I.SLT, a, 0), b, zero))
    return m.ibin(O.SubI, hi, m.where(m.icmp(I.SLT, b, 0), a, zero))


def _halving_add(m: MathBuilder, a: Value, b: Value, signed: bool, up: bool) -> Value:
    """(a + b) >> 1 (rounded up with `up`) without overflow: (a & b) + ((a ^ b) >> 1), or (a | b) - ((a ^ b) >> 1)."""
    half = m.ibin(O.ShRSI if signed else O.ShRUI, m.ibin(O.XOrI, a, b), 1)
    if up:
        return m.ibin(O.SubI, m.ibin(O.OrI, a, b), half)
    return m.ibin(O.AddI, m.ibin(O.AndI, a, b), half)


def _mul24(m: MathBuilder, a: Value, b: Value, signed: bool) -> Value:
    if signed:
        low = lambda v: m.ibin(O.ShRSI, m.ibin(O.ShLI, v, 8), 8)
    else:
        low = lambda v: m.ibin(O.AndI, v, 0xFFFFFF)
    return m.ibin(O.MulI, low(a), low(b))


def _sad(m: MathBuilder, x: Value, y: Value, z: Value, signed: bool) -> Value:
    gt = m.icmp(I.SGT if signed else I.UGT, x, y)
    diff = m.where(gt, m.ibin(O.SubI, x, y), m.ibin(O.SubI, y, x))
    return m.ibin(O.AddI, diff, z)


def _ffs(m: MathBuilder, x: Value) -> Value:
    tz = m.ibin(O.AddI, m.make(O.CountTrailingZeros, [x], x.type), 1)
    r = m.where(m.icmp(I.EQ, x, 0), m.c(0, x), tz)
    return r if r.type.element == i32 else m.cast(O.TruncI, r, i32)


def _count(cls: type[Op]) -> Build:
    def build(m: MathBuilder, a: list[Value], t: Type) -> Value:
        r = m.make(cls, a, a[0].type)
        return r if r.type.element == i32 else m.cast(O.TruncI, r, i32)

    return build


_INT: dict[str, Build] = {
    "__nv_abs": lambda m, a, t: m.make(O.AbsI, a, a[0].type),
    "__nv_llabs": lambda m, a, t: m.make(O.AbsI, a, a[0].type),
    "__nv_brev": lambda m, a, t: _brev(m, a[0]),
    "__nv_brevll": lambda m, a, t: _brev(m, a[0]),
    "__nv_clz": _count(O.CountLeadingZeros),
    "__nv_clzll": _count(O.CountLeadingZeros),
    "__nv_popc": _count(O.CtPop),
    "__nv_popcll": _count(O.CtPop),
    "__nv_ffs": lambda m, a, t: _ffs(m, a[0]),
    "__nv_ffsll": lambda m, a, t: _ffs(m, a[0]),
    "__nv_byte_perm": lambda m, a, t: _byte_perm(m, *a),
    "__nv_mulhi": lambda m, a, t: _mulhi_signed(m, *a),
    "__nv_mul64hi": lambda m, a, t: _mulhi_signed(m, *a),
    "__nv_umulhi": lambda m, a, t: m.ibin(O.MulhiUI, *a),
    "__nv_umul64hi": lambda m, a, t: m.ibin(O.MulhiUI, *a),
    "__nv_mul24": lambda m, a, t: _mul24(m, *a, signed=True),
    "__nv_umul24": lambda m, a, t: _mul24(m, *a, signed=False),
    "__nv_hadd": lambda m, a, t: _halving_add(m, *a, signed=True, up=False),
    "__nv_rhadd": lambda m, a, t: _halving_add(m, *a, signed=True, up=True),
    "__nv_uhadd": lambda m, a, t: _halving_add(m, *a, signed=False, up=False),
    "__nv_urhadd": lambda m, a, t: _halving_add(m, *a, signed=False, up=True),
    "__nv_sad": lambda m, a, t: _sad(m, *a, signed=True),
    "__nv_usad": lambda m, a, t: _sad(m, *a, signed=False),
}
for _sym, _build in _INT.items():
    _add(_sym, _build, "exact", "expansion")

# ---- (c) conversions and directed rounding -----------------------------------------------------------------------------

R.register(_add, REFUSED)


# ---- the pass -----------------------------------------------------------------------------------------------------------


def _check_types(op: O.ExternElementwise, backend: str) -> None:
    for v in (*op.operands, op.result):
        if not isinstance(v.type.element, (FloatType, IntType)):
            raise UnsupportedError(backend, f"{op.symbol} on {v.type.element}", op.loc)


def rewrite_extern(op: O.ExternElementwise, backend: str) -> None:
    """Replace one `__nv_*` extern op by its table entry's ops (before it), or refuse it by name."""
    symbol = op.symbol
    entry = LIBRARY.get(symbol)
    if entry is None:
        reason = REFUSED.get(symbol, "not a function of Triton's libdevice module")
        raise UnsupportedError(backend, f"libdevice function {symbol}: {reason}", op.loc)
    _check_types(op, backend)
    m = MathBuilder(op)
    result = entry.build(m, list(op.operands), op.result.type.element)
    assert result.type == op.result.type, f"{symbol}: built {result.type}, expected {op.result.type}"
    _replace(op, result)


def _replace(op: Op, result: Value) -> None:
    """Replace `op` by `result`, which keeps the op's result name (the source variable's, where Triton kept it)."""
    if result.name is None and result not in op.operands:
        result.name = op.result.name
    replace(op, [result])


def expand_libm(op: Op, expansion: Callable[[MathBuilder, list[Value]], Value]) -> None:
    m = MathBuilder(op)
    _replace(op, expansion(m, list(op.operands)))


@ir_pass("math-library")
class MathLibrary:
    """Every `tt.extern_elementwise` naming a `__nv_*` function becomes SDK ops (see the module docstring). A
    `sdk.precise_exp` (libdevice's exp, the expansions' exp) stays one only for a backend with a rule of its own for
    it, one that may approximate a plain `math.exp`; elsewhere it is that plain exp."""

    rules: RuleTable | None = None

    def run(self, module: Module, ctx: PassContext) -> None:
        backend = ctx.target.name
        for op in list(module.walk()):
            if isinstance(op, O.ExternElementwise) and op.symbol.startswith("__nv_"):
                rewrite_extern(op, backend)
        for op in list(module.walk()):
            expansion = LIBM_EXPANSIONS.get(type(op))
            if expansion is not None and not (self.rules is not None and self.rules.has_own(type(op))):
                expand_libm(op, expansion[0])
        if self.rules is None or not self.rules.has_own(O.PreciseExp):
            for op in list(module.walk()):
                if type(op) is O.PreciseExp:
                    _replace(op, MathBuilder(op).un(O.Exp, op.src))


__all__ = ["LIBM_EXPANSIONS", "LIBRARY", "REFUSED", "MathFunction", "MathLibrary"]
