"""Elementwise rules (shared C-like): arith and math ops, comparisons, select, clamp, casts.

Each rule builds the C expression for one element; `lift` makes it a scalar variable or a tile generator. Integer
arithmetic wraps (it is done in the unsigned type: signed overflow is undefined in C). An integer expression has its
element's C type: C promotes char/short operands to int (`CT.promoted`), so bitwise ops and selects on them are cast
back, and the built-ins overloaded on the type (min, max, clz, popcount) get operands of that type; abs is negation
in the unsigned type (abs(INT_MIN) == INT_MIN, as in Triton). Division, shifts and float→int conversions arrive
with in-range operands (sdk/transforms/int_semantics.py selects Triton's results for x/0, INT_MIN/-1, shifts by >=
the width and out-of-range floats), so each is C's plain operator or cast. f16/bf16 results are rounded to their
format after every op.
"""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.analysis.tile_model import CHEAP_INDEX
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op
from triton_backend_sdk.ir.enums import PropagateNan, RoundingMode
from triton_backend_sdk.ir.types import FloatType, IntType, PointerType, Type

from . import ctypes as CT
from . import vmath
from .context import Idx, RenderContext, Tile
from .rules import CSTYLE_RULES as RULES


def lift(ctx: RenderContext, op: Op, fn: Callable[..., str], cost: int = 1) -> None:
    """Define `op`'s single result as `fn(*operand elements)`, elementwise over tensors."""
    res = op.result
    srcs = [ctx.get(v) for v in op.operands]
    if not res.type.is_tensor:
        ctx.define(res, fn(*srcs))
        return
    tiles = [s for s in srcs if isinstance(s, Tile)]
    total = cost + sum(t.cost for t in tiles if t.reg is None)
    index_only = all(t.reg is None and t.index_only for t in tiles)
    ctype = ctx.ctype(res)

    def gen(idx: Idx) -> str:
        return fn(*[ctx.element(s, idx) for s in srcs])

    ctx.define(res, Tile(res.type.shape, ctype, gen=gen, cost=total, index_only=index_only))


def lift_each(ctx: RenderContext, op: Op, fn: Callable[..., tuple[str, ...]], cost: int = 1) -> None:
    """Define each of `op`'s results as the matching expression of `fn(*operand elements)` (a tuple): a custom op
    with several results (sdk/custom_ops.py)."""
    srcs = [ctx.get(v) for v in op.operands]
    if not op.results[0].type.is_tensor:
        for res, expr in zip(op.results, fn(*srcs)):
            ctx.define(res, expr)
        return
    tiles = [s for s in srcs if isinstance(s, Tile)]
    total = cost + sum(t.cost for t in tiles if t.reg is None)
    index_only = all(t.reg is None and t.index_only for t in tiles)
    for i, res in enumerate(op.results):

        def gen(idx: Idx, i: int = i) -> str:
            return fn(*[ctx.element(s, idx) for s in srcs])[i]

        ctx.define(res, Tile(res.type.shape, ctx.ctype(res), gen=gen, cost=total, index_only=index_only))


def round_to(t: Type, expr: str, ctx: RenderContext, rtz: bool = False) -> str:
    """Round a float expression to `t`'s format when `t` is f16/bf16/fp8 (values are kept exactly representable)."""
    if CT.fp8_of(t) is not None:
        return f"{ctx.fp8_helper(t, 'dec')}({ctx.fp8_helper(t, 'enc_rtz' if rtz else 'enc')}({expr}))"
    if CT.is_half(t):
        return f"{ctx.helper('tb_rnd_h_rtz' if rtz else 'tb_rnd_h')}({expr})"
    if CT.is_bf16(t):
        return f"{ctx.helper('tb_rnd_bf_rtz' if rtz else 'tb_rnd_bf')}({expr})"
    return expr


# ---- integers --------------------------------------------------------------------------------------------------------


def _wrap(sym: str) -> Callable[[RenderContext, Type, str, str], str]:
    def f(ctx: RenderContext, t: Type, a: str, b: str) -> str:
        if CT.int_width(t) == 1:
            return {"+": f"({a} ^ {b})", "-": f"({a} ^ {b})", "*": f"({a} & {b})"}[sym]
        T, U = CT.ctype(t), CT.wrap_uctype(t)
        return f"(({T})(({U}){a} {sym} ({U}){b}))"

    return f


def _bitwise(sym: str) -> Callable[[RenderContext, Type, str, str], str]:
    def f(ctx: RenderContext, t: Type, a: str, b: str) -> str:
        return f"(({CT.ctype(t)})({a} {sym} {b}))" if CT.promoted(t) else f"({a} {sym} {b})"

    return f


def _typed(t: Type, a: str) -> str:
    """Operand `a` of an integer built-in overloaded on its type, as `t`'s C type (see CT.promoted)."""
    return f"({CT.ctype(t)}){a}" if CT.promoted(t) else a


def _plain(sym: str, unsigned: bool) -> Callable[[RenderContext, Type, str, str], str]:
    """Division, remainder and shifts in C: operands arrive in range (sdk/transforms/int_semantics.py), and an
    unsigned op (or a left shift, which is undefined for negative signed values in C) is done in the unsigned type."""

    def f(ctx: RenderContext, t: Type, a: str, b: str) -> str:
        if CT.int_width(t) == 1:
            raise ctx.unsupported(f"integer '{sym}' on i1")
        T, U = CT.ctype(t), CT.uctype(t)
        if unsigned:
            return f"(({T})(({U}){a} {sym} ({U}){b}))"
        return f"(({T})({a} {sym} {b}))"

    return f


def _minmax(fn: str, unsigned: bool) -> Callable[[RenderContext, Type, str, str], str]:
    def f(ctx: RenderContext, t: Type, a: str, b: str) -> str:
        if CT.int_width(t) == 1:
            raise ctx.unsupported(f"integer {fn} on i1")
        if unsigned:
            T, U = CT.ctype(t), CT.uctype(t)
            return f"(({T}){ctx.lang.call(fn, f'({U}){a}', f'({U}){b}')})"
        return ctx.lang.call(fn, _typed(t, a), _typed(t, b))

    return f


def _mulhi(ctx: RenderContext, t: Type, a: str, b: str) -> str:
    T, U = CT.ctype(t), CT.uctype(t)
    return f"(({T}){ctx.lang.call('mul_hi', f'({U}){a}', f'({U}){b}')})"


_INT_BINARY: dict[type, Callable[[RenderContext, Type, str, str], str]] = {
    O.AddI: _wrap("+"),
    O.SubI: _wrap("-"),
    O.MulI: _wrap("*"),
    O.DivSI: _plain("/", False),
    O.DivUI: _plain("/", True),
    O.RemSI: _plain("%", False),
    O.RemUI: _plain("%", True),
    O.MinSI: _minmax("min", False),
    O.MaxSI: _minmax("max", False),
    O.MinUI: _minmax("min", True),
    O.MaxUI: _minmax("max", True),
    O.ShLI: _plain("<<", True),
    O.ShRSI: _plain(">>", False),
    O.ShRUI: _plain(">>", True),
    O.AndI: _bitwise("&"),
    O.OrI: _bitwise("|"),
    O.XOrI: _bitwise("^"),
    O.MulhiUI: _mulhi,
}


@RULES.register(*_INT_BINARY)
def render_int_binary(ctx: RenderContext, op: Op) -> None:
    f = _INT_BINARY[type(op)]
    t = op.result.type
    if not isinstance(t.element, IntType):
        raise ctx.unsupported(f"{op.op_name} on {t.element}", op)
    divides = type(op) in _DIVISIONS and not isinstance(op.operands[1].owner, O.Constant)
    lift(ctx, op, lambda a, b: f(ctx, t, a, b), cost=DIVISION_COST if divides else 1)


#: a generator with an integer division by a run-time value in it is stored where it is read in a loop's body or
#: read twice, not recomputed: tens of cycles a division, against a store and a load (tutorial 03's `offs_am % M`
#: rows, read every k step through a carried pointer offset, were one division per prefetched line and per row);
#: the device compiler turns a division by a constant into multiplies and shifts
DIVISION_COST = CHEAP_INDEX
_DIVISIONS = (O.DivSI, O.DivUI, O.RemSI, O.RemUI)


def _ctz(ctx: RenderContext, t: Type, a: str) -> str:
    T, U = CT.ctype(t), CT.uctype(t)
    return f"(({T}){ctx.lang.call('popcount', f'({U})(~({U}){a} & (({U}){a} - ({U})1))')})"


def _abs(ctx: RenderContext, t: Type, a: str) -> str:
    """|a| wrapping as Triton's does (abs(INT_MIN) == INT_MIN), negated in the unsigned type: OpenCL's abs() returns
    the unsigned type, and PoCL's compiler takes abs(INT_MIN) as non-negative (`abs(x) < 0` folds to false)."""
    T, U = CT.ctype(t), CT.wrap_uctype(t)
    name = f"tb_abs_{T}"
    ctx.define_helper(name, f"{T} {name}({T} x) {{ return ({T})(x < 0 ? ({U})0 - ({U})x : ({U})x); }}")
    return f"{name}({a})"


_INT_UNARY: dict[type, Callable[[RenderContext, Type, str], str]] = {
    O.AbsI: _abs,
    O.CountLeadingZeros: lambda ctx, t, a: f"(({CT.ctype(t)}){ctx.lang.call('clz', _typed(t, a))})",
    O.CountTrailingZeros: _ctz,
    O.CtPop: lambda ctx, t, a: f"(({CT.ctype(t)}){ctx.lang.call('popcount', _typed(t, a))})",
}


@RULES.register(*_INT_UNARY)
def render_int_unary(ctx: RenderContext, op: Op) -> None:
    f = _INT_UNARY[type(op)]
    t = op.result.type
    if CT.int_width(t) == 1:
        raise ctx.unsupported(f"{op.op_name} on i1", op)
    lift(ctx, op, lambda a: f(ctx, t, a))


# ---- floats ----------------------------------------------------------------------------------------------------------


def _maximum(kind: str) -> Callable[[RenderContext, Type, str, str], str]:
    def f(ctx: RenderContext, t: Type, a: str, b: str) -> str:
        prefix = "tb_d" if CT.is_f64(t) else "tb_f"
        return f"{ctx.helper(prefix + kind)}({a}, {b})"

    return f


def _call2(fn: str) -> Callable[[RenderContext, Type, str, str], str]:
    return lambda ctx, t, a, b: ctx.lang.call(fn, a, b)


def _infix(sym: str) -> Callable[[RenderContext, Type, str, str], str]:
    return lambda ctx, t, a, b: f"({a} {sym} {b})"


_FLOAT_BINARY: dict[type, Callable[[RenderContext, Type, str, str], str]] = {
    O.AddF: _infix("+"),
    O.SubF: _infix("-"),
    O.MulF: _infix("*"),
    O.DivF: _infix("/"),
    O.PreciseDivF: _infix("/"),
    O.ApproxDivF: _infix("/"),
    O.RemF: _call2("fmod"),
    O.MaxNumF: _call2("fmax"),
    O.MinNumF: _call2("fmin"),
    O.MaximumF: _maximum("maximum"),
    O.MinimumF: _maximum("minimum"),
    O.PowF: _call2("pow"),
    O.Atan2: _call2("atan2"),
    O.CopySign: _call2("copysign"),
}


def _float_result(ctx: RenderContext, op: Op) -> Type:
    t = op.result.type
    if not isinstance(t.element, FloatType):
        raise ctx.unsupported(f"{op.op_name} on {t.element}", op)
    ctx.ctype(op.result)  # rejects fp8, checks fp64
    return t


@RULES.register(*_FLOAT_BINARY)
def render_float_binary(ctx: RenderContext, op: Op) -> None:
    f = _FLOAT_BINARY[type(op)]
    t = _float_result(ctx, op)
    lift(ctx, op, lambda a, b: round_to(t, f(ctx, t, a, b), ctx))


#: the unary float ops OpenCL C spells as the C function of their class (`function`), plus rsqrt (a built-in)
_FLOAT_UNARY_FN = {
    **{
        cls: cls.function
        for cls in (
            O.Exp,
            O.PreciseExp,
            O.Exp2,
            O.Expm1,
            O.Log,
            O.Log2,
            O.Log10,
            O.Log1p,
            O.Sin,
            O.Cos,
            O.Tan,
            O.Asin,
            O.Acos,
            O.Atan,
            O.Sinh,
            O.Cosh,
            O.Tanh,
            O.Asinh,
            O.Acosh,
            O.Atanh,
            O.Sqrt,
            O.PreciseSqrt,
            O.Cbrt,
            O.AbsF,
            O.Floor,
            O.Ceil,
            O.Trunc,
            O.Round,
            O.RoundEven,
            O.Erf,
            O.Erfc,
        )
    },
    O.Rsqrt: "rsqrt",
}


#: cost of a math library call in a generator (above CHEAP: a result used twice, say exp(x - max) in a softmax's sum
#: and its store, is computed once into registers instead of twice)
MATH_COST = 8
_CHEAP_UNARY = {"fabs", "floor", "ceil", "trunc", "round", "rint"}


@RULES.register(O.NegF, *_FLOAT_UNARY_FN)
def render_float_unary(ctx: RenderContext, op: Op) -> None:
    t = _float_result(ctx, op)
    if isinstance(op, O.NegF):
        lift(ctx, op, lambda a: f"(-{a})")
        return
    fn = _FLOAT_UNARY_FN[type(op)]
    cost = 1 if fn in _CHEAP_UNARY else MATH_COST
    call = vmath.approx_fn(ctx, op) or vmath.inline_fn(ctx, fn, ctx.ctype(op.result)) or ctx.lang.function(fn)
    lift(ctx, op, lambda a: round_to(t, f"{call}({a})", ctx), cost=cost)


@RULES.register(O.Fma)
def render_fma(ctx: RenderContext, op: Op) -> None:
    t = _float_result(ctx, op)
    lift(ctx, op, lambda a, b, c: round_to(t, ctx.lang.call("fma", a, b, c), ctx))


# ---- comparisons, select, clamp --------------------------------------------------------------------------------------


@RULES.register(O.CmpI)
def render_cmpi(ctx: RenderContext, op: O.CmpI) -> None:
    unsigned, sym = op.predicate.unsigned, op.predicate.relation
    t = op.lhs.type
    if isinstance(t.element, PointerType):
        lift(ctx, op, lambda a, b: f"((ulong){a} {sym} (ulong){b})")
        return
    if unsigned and CT.int_width(t) > 1:
        U = CT.uctype(t)
        lift(ctx, op, lambda a, b: f"(({U}){a} {sym} ({U}){b})")
    else:
        lift(ctx, op, lambda a, b: f"({a} {sym} {b})")


@RULES.register(O.CmpF)
def render_cmpf(ctx: RenderContext, op: O.CmpF) -> None:
    pattern = op.predicate.c_pattern
    isnan = ctx.lang.function("isnan") if "{isnan}" in pattern else ""
    lift(ctx, op, lambda a, b: pattern.format(a=a, b=b, isnan=isnan))


@RULES.register(O.Select)
def render_select(ctx: RenderContext, op: O.Select) -> None:
    t = op.result.type
    if CT.promoted(t):
        T = CT.ctype(t)
        lift(ctx, op, lambda c, a, b: f"(({T})({c} ? {a} : {b}))")
    else:
        lift(ctx, op, lambda c, a, b: f"({c} ? {a} : {b})")


@RULES.register(O.ClampF)
def render_clampf(ctx: RenderContext, op: O.ClampF) -> None:
    t = _float_result(ctx, op)
    if op.propagate_nan == PropagateNan.ALL:
        mx, mn = _maximum("maximum"), _maximum("minimum")
        lift(ctx, op, lambda x, lo, hi: mn(ctx, t, mx(ctx, t, x, lo), hi))
    else:
        lang = ctx.lang
        lift(ctx, op, lambda x, lo, hi: lang.call("fmin", lang.call("fmax", x, lo), hi))


# ---- casts -----------------------------------------------------------------------------------------------------------


def _int_cast(src: Type, dst: Type, signed: bool) -> Callable[[str], str]:
    ws, wd = CT.int_width(src), CT.int_width(dst)
    Td = CT.ctype(dst)
    if wd == 1:
        return lambda a: f"(({a} & 1) != 0)"
    if ws == 1:
        return (lambda a: f"({a} ? ({Td})-1 : ({Td})0)") if signed else (lambda a: f"(({Td}){a})")
    if wd > ws and not signed:
        Us = CT.uctype(src)
        return lambda a: f"(({Td})({Us}){a})"
    if wd >= ws:
        return lambda a: f"(({Td}){a})"
    Ud = CT.uctype(dst)
    return lambda a: f"(({Td})({Ud}){a})"


def _to_bits(ctx: RenderContext, t: Type, a: str) -> str:
    """The bit pattern of a value of element type `t`, as an unsigned integer of its width."""
    if CT.fp8_of(t) is not None:
        return f"{ctx.fp8_helper(t, 'code')}({a})"
    if CT.is_half(t):
        return f"{ctx.helper('tb_h2bits')}({a})"
    if CT.is_bf16(t):
        return f"((ushort)({ctx.lang.bitcast('uint', a)} >> 16))"
    if isinstance(t.element, FloatType):
        return ctx.lang.bitcast("ulong" if CT.is_f64(t) else "uint", a)
    return f"(({CT.uctype(t)}){a})"


def _from_bits(ctx: RenderContext, t: Type, bits: str) -> str:
    if CT.fp8_of(t) is not None:
        return f"{ctx.fp8_helper(t, 'dec')}((uchar){bits})"
    if CT.is_half(t):
        return f"{ctx.helper('tb_h2f')}((ushort){bits})"
    if CT.is_bf16(t):
        return ctx.lang.bitcast("float", f"(uint)(ushort){bits} << 16")
    if isinstance(t.element, FloatType):
        return (
            ctx.lang.bitcast("double", f"(ulong){bits}") if CT.is_f64(t) else ctx.lang.bitcast("float", f"(uint){bits}")
        )
    return f"(({CT.ctype(t)}){bits})"


def _bitcast(ctx: RenderContext, src: Type, dst: Type, op: Op) -> Callable[[str], str]:
    s, d = src.element, dst.element
    if isinstance(s, PointerType) or isinstance(d, PointerType):
        if isinstance(s, PointerType) and isinstance(d, PointerType):
            pd = ctx.ctype(op.result)
            return lambda a: f"(({pd}){a})"
        raise ctx.unsupported(f"bitcast between {s} and {d}", op)
    if s == d:
        return lambda a: a
    return lambda a: _from_bits(ctx, dst, _to_bits(ctx, src, a))


def _float_cast(ctx: RenderContext, src: Type, dst: Type, rtz: bool) -> Callable[[str], str]:
    """Float to float: widening is exact; narrowing rounds to nearest even (or toward zero for RTZ fp_to_fp), once:
    a double bound for f16/bf16/fp8 narrows to float rounded to odd first (nearest even there would round twice)."""
    Ts, Td = CT.ctype(src), CT.ctype(dst)
    if src.element == dst.element:
        return lambda a: a
    if Td == "double":
        return lambda a: f"((double){a})"
    to_float = lambda a: ctx.lang.convert("float", a, "rtz" if rtz else None)
    narrow = to_float if Ts == "double" else (lambda a: a)
    if Ts == "double" and not rtz and dst.element.width < 32:
        narrow = lambda a: f"{ctx.helper('tb_d2f_odd')}({a})"
    return lambda a: round_to(dst, narrow(a), ctx, rtz)


def _cast_fn(ctx: RenderContext, op: O.CastOp) -> Callable[[str], str]:
    src, dst = op.src.type, op.result.type
    cls = type(op)
    ctx.ctype(op.result)
    ctx.ctype(op.src)
    if cls in (O.ExtSI, O.IndexCast):
        return _int_cast(src, dst, True)
    if cls in (O.ExtUI, O.TruncI, O.IndexCastUI):
        return _int_cast(src, dst, False)
    if cls in (O.ExtF, O.TruncF, O.FpToFp):
        rtz = isinstance(op, O.FpToFp) and op.rounding == RoundingMode.RTZ
        return _float_cast(ctx, src, dst, rtz)
    if cls in (O.SIToFP, O.UIToFP):
        Td = CT.ctype(dst)
        if CT.int_width(src) == 1:
            one = "-1" if cls is O.SIToFP else "1"
            return lambda a: f"({a} ? ({Td}){one} : ({Td})0)"
        if cls is O.UIToFP:
            Us = CT.uctype(src)
            return lambda a: round_to(dst, f"(({Td})({Us}){a})", ctx)
        return lambda a: round_to(dst, f"(({Td}){a})", ctx)
    if cls in (O.FPToSI, O.FPToUI):
        if CT.int_width(dst) == 1:
            raise ctx.unsupported("float to i1 conversion", op)
        Td = CT.ctype(dst)
        conv = Td if cls is O.FPToSI else CT.uctype(dst)
        return lambda a: f"(({Td})({conv}){a})"
    if cls in (O.ArithBitcast, O.TTBitcast):
        return _bitcast(ctx, src, dst, op)
    if cls is O.IntToPtr:
        P = ctx.ctype(op.result)
        return lambda a: f"(({P})(ulong){a})"
    if cls is O.PtrToInt:
        Td = CT.ctype(dst)
        return lambda a: f"(({Td})(ulong){a})"
    raise ctx.unsupported(f"cast {op.op_name} from {src.element} to {dst.element}", op)


@RULES.register(O.CastOp)
def render_cast(ctx: RenderContext, op: O.CastOp) -> None:
    lift(ctx, op, _cast_fn(ctx, op))


# ---- extern elementwise (C functions outside libdevice) ----------------------------------------------------------------

#: OpenCL C's built-in math functions that C also has (C's float version is the name + `f`; OpenCL overloads one
#: name): what a `tt.extern_elementwise` naming a C math function calls. libdevice's `__nv_*` symbols never reach this
#: rule: the SDK's math-library pass rewrites them into SDK ops first.
C_MATH_BUILTINS = frozenset(
    {
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "cbrt",
        "ceil",
        "copysign",
        "cos",
        "cosh",
        "erf",
        "erfc",
        "exp",
        "exp2",
        "expm1",
        "fabs",
        "fdim",
        "floor",
        "fma",
        "fmax",
        "fmin",
        "fmod",
        "hypot",
        "lgamma",
        "log",
        "log10",
        "log1p",
        "log2",
        "logb",
        "nextafter",
        "pow",
        "remainder",
        "rint",
        "round",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "tgamma",
        "trunc",
    }
)


@RULES.register(O.ExternElementwise)
def render_extern(ctx: RenderContext, op: O.ExternElementwise) -> None:
    sym = op.symbol
    t = op.result.type
    single = isinstance(t.element, FloatType) and not CT.is_f64(t)
    name = sym[:-1] if single and sym.endswith("f") and sym[:-1] in C_MATH_BUILTINS else sym
    if name not in C_MATH_BUILTINS or not isinstance(t.element, FloatType):
        raise ctx.unsupported(f"extern function {sym!r} (not a C math function OpenCL C has)", op)
    _float_result(ctx, op)
    lift(ctx, op, lambda *a: round_to(t, ctx.lang.call(name, *a), ctx), cost=MATH_COST)
