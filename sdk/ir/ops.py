"""One class per TTIR op. Lowering tables and passes dispatch on these classes, never on name strings.

`OP_CLASSES` maps an MLIR op name to its class; the reader instantiates from it and falls back to `UnknownOp`,
which keeps the name so that a backend can say precisely which op it has no rule for.
"""

from __future__ import annotations

import re

from .attrs import (
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
)
from .core import Block, Op, Value
from .enums import (
    CacheModifier,
    CmpFPredicate,
    CmpIPredicate,
    EnumAttr,
    EvictionPolicy,
    InputPrecision,
    MemSemantic,
    MemSyncScope,
    PaddingOption,
    PropagateNan,
    RMWOp,
    RoundingMode,
)
from .types import FunctionType

OP_CLASSES: dict[str, type[Op]] = {}


def register_op(cls: type[Op]) -> type[Op]:
    """Register an op class under its MLIR name (also how plugins add ops to the IR)."""
    if cls.name in OP_CLASSES and OP_CLASSES[cls.name] is not cls:
        raise ValueError(f"op {cls.name!r} is already registered as {OP_CLASSES[cls.name].__qualname__}")
    OP_CLASSES[cls.name] = cls
    return cls


def _int(op: Op, name: str, default: int | None = None) -> int:
    a = op.attrs.get(name)
    if a is None:
        if default is None:
            raise KeyError(f"{op.name} has no attribute {name!r}")
        return default
    if isinstance(a, (IntegerAttr, BoolAttr)):
        return int(a.value)
    raise TypeError(f"{op.name}.{name} is {a!r}, not an integer")


def _bool(op: Op, name: str) -> bool:
    a = op.attrs.get(name)
    if a is None:
        return False
    if isinstance(a, (BoolAttr, IntegerAttr)):
        return bool(a.value)
    return True  # a UnitAttr flag


def _enum(op: Op, name: str, default=None):
    a = op.attrs.get(name)
    if a is None:
        return default
    assert isinstance(a, EnumAttr), f"{op.name}.{name} is {a!r}"
    return a.value


class UnknownOp(Op):
    """An op the SDK has no class for; keeps its MLIR name per instance."""

    def __init__(self, op_name: str, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._op_name = op_name

    @property
    def op_name(self) -> str:  # type: ignore[override]
        return self._op_name


# ---------------------------------------------------------------------------------------------------------------------
# Families. A rule may be registered for a family class and then covers every member.


class ElementwiseOp(Op):
    elementwise = True
    pure = True


class BinaryOp(ElementwiseOp):
    @property
    def lhs(self) -> Value:
        return self.operands[0]

    @property
    def rhs(self) -> Value:
        return self.operands[1]


class UnaryOp(ElementwiseOp):
    @property
    def src(self) -> Value:
        return self.operands[0]


class CastOp(UnaryOp):
    """Elementwise conversion from the operand's element type to the result's."""


class IntBinaryOp(BinaryOp):
    pass


class FloatBinaryOp(BinaryOp):
    pass


class FloatUnaryOp(UnaryOp):
    pass


def _define(base: type[Op], cls_name: str, op_name: str, **extra) -> type[Op]:
    cls = type(cls_name, (base,), {"name": op_name, "__module__": __name__, **extra})
    register_op(cls)
    globals()[cls_name] = cls
    return cls


_INT_BINARY = {
    "AddI": "arith.addi",
    "SubI": "arith.subi",
    "MulI": "arith.muli",
    "DivSI": "arith.divsi",
    "DivUI": "arith.divui",
    "RemSI": "arith.remsi",
    "RemUI": "arith.remui",
    "MinSI": "arith.minsi",
    "MaxSI": "arith.maxsi",
    "MinUI": "arith.minui",
    "MaxUI": "arith.maxui",
    "ShLI": "arith.shli",
    "ShRSI": "arith.shrsi",
    "ShRUI": "arith.shrui",
    "AndI": "arith.andi",
    "OrI": "arith.ori",
    "XOrI": "arith.xori",
    "CeilDivSI": "arith.ceildivsi",
    "CeilDivUI": "arith.ceildivui",
    "FloorDivSI": "arith.floordivsi",
    "MulhiUI": "tt.mulhiui",
}
_FLOAT_BINARY = {
    "AddF": "arith.addf",
    "SubF": "arith.subf",
    "MulF": "arith.mulf",
    "DivF": "arith.divf",
    "RemF": "arith.remf",
    "MaxNumF": "arith.maxnumf",
    "MinNumF": "arith.minnumf",
    "MaximumF": "arith.maximumf",
    "MinimumF": "arith.minimumf",
    "PreciseDivF": "tt.precise_divf",
    "ApproxDivF": "tt.approx_divf",
    "PowF": "math.powf",
    "Atan2": "math.atan2",
    "CopySign": "math.copysign",
}
_FLOAT_UNARY = {
    "NegF": "arith.negf",
    "Exp": "math.exp",
    "Exp2": "math.exp2",
    "Expm1": "math.expm1",
    "Log": "math.log",
    "Log2": "math.log2",
    "Log10": "math.log10",
    "Log1p": "math.log1p",
    "Sin": "math.sin",
    "Cos": "math.cos",
    "Tan": "math.tan",
    "Asin": "math.asin",
    "Acos": "math.acos",
    "Atan": "math.atan",
    "Sinh": "math.sinh",
    "Cosh": "math.cosh",
    "Tanh": "math.tanh",
    "Asinh": "math.asinh",
    "Acosh": "math.acosh",
    "Atanh": "math.atanh",
    "Sqrt": "math.sqrt",
    "Rsqrt": "math.rsqrt",
    "Cbrt": "math.cbrt",
    "AbsF": "math.absf",
    "Floor": "math.floor",
    "Ceil": "math.ceil",
    "Trunc": "math.trunc",
    "Round": "math.round",
    "RoundEven": "math.roundeven",
    "Erf": "math.erf",
    "Erfc": "math.erfc",
    "PreciseSqrt": "tt.precise_sqrt",
}
_INT_UNARY = {
    "AbsI": "math.absi",
    "CountLeadingZeros": "math.ctlz",
    "CountTrailingZeros": "math.cttz",
    "CtPop": "math.ctpop",
}
_CASTS = {
    "ExtSI": "arith.extsi",
    "ExtUI": "arith.extui",
    "TruncI": "arith.trunci",
    "ExtF": "arith.extf",
    "TruncF": "arith.truncf",
    "SIToFP": "arith.sitofp",
    "UIToFP": "arith.uitofp",
    "FPToSI": "arith.fptosi",
    "FPToUI": "arith.fptoui",
    "ArithBitcast": "arith.bitcast",
    "IndexCast": "arith.index_cast",
    "IndexCastUI": "arith.index_castui",
    "TTBitcast": "tt.bitcast",
    "IntToPtr": "tt.int_to_ptr",
    "PtrToInt": "tt.ptr_to_int",
}

for _n, _o in _INT_BINARY.items():
    _define(IntBinaryOp, _n, _o)
for _n, _o in _FLOAT_BINARY.items():
    _define(FloatBinaryOp, _n, _o)
for _n, _o in _FLOAT_UNARY.items():
    _define(FloatUnaryOp, _n, _o)
for _n, _o in _INT_UNARY.items():
    _define(UnaryOp, _n, _o)
for _n, _o in _CASTS.items():
    _define(CastOp, _n, _o)


@register_op
class FpToFp(CastOp):
    name = "tt.fp_to_fp"

    @property
    def rounding(self) -> RoundingMode | None:
        return _enum(self, "rounding")


@register_op
class Fma(ElementwiseOp):
    name = "math.fma"


@register_op
class ClampF(ElementwiseOp):
    name = "tt.clampf"

    @property
    def propagate_nan(self) -> PropagateNan:
        return _enum(self, "propagateNan", PropagateNan.NONE)


@register_op
class CmpI(BinaryOp):
    name = "arith.cmpi"

    @property
    def predicate(self) -> CmpIPredicate:
        return _enum(self, "predicate")


@register_op
class CmpF(BinaryOp):
    name = "arith.cmpf"

    @property
    def predicate(self) -> CmpFPredicate:
        return _enum(self, "predicate")


@register_op
class Select(ElementwiseOp):
    name = "arith.select"

    @property
    def condition(self) -> Value:
        return self.operands[0]


@register_op
class Constant(Op):
    """`arith.constant`; `value` is an IntegerAttr, FloatAttr or DenseAttr."""

    name = "arith.constant"
    pure = True

    @property
    def value(self):
        return self.attrs["value"]


@register_op
class ExternElementwise(ElementwiseOp):
    name = "tt.extern_elementwise"

    @property
    def symbol(self) -> str:
        a = self.attrs["symbol"]
        assert isinstance(a, StringAttr)
        return a.value

    @property
    def libname(self) -> str:
        a = self.attrs.get("libname")
        return a.value if isinstance(a, StringAttr) else ""

    @property
    def libpath(self) -> str:
        a = self.attrs.get("libpath")
        return a.value if isinstance(a, StringAttr) else ""


@register_op
class ElementwiseInlineAsm(Op):
    name = "tt.elementwise_inline_asm"


# ---------------------------------------------------------------------------------------------------------------------
# Functions and calls


@register_op
class Func(Op):
    """`tt.func`; one region whose entry block's arguments are the kernel parameters."""

    name = "tt.func"

    @property
    def sym_name(self) -> str:
        a = self.attrs["sym_name"]
        assert isinstance(a, StringAttr)
        return a.value

    @property
    def function_type(self) -> FunctionType:
        a = self.attrs["function_type"]
        assert isinstance(a, TypeAttr) and isinstance(a.type, FunctionType)
        return a.type

    @property
    def is_public(self) -> bool:
        a = self.attrs.get("sym_visibility")
        return not (isinstance(a, StringAttr) and a.value == "private")

    @property
    def body(self) -> Block:
        return self.regions[0].entry

    @property
    def args(self) -> list:
        return self.body.args

    def arg_attr(self, index: int, name: str):
        a = self.attrs.get("arg_attrs")
        if not isinstance(a, ArrayAttr) or index >= len(a.values):
            return None
        return a.values[index].get(name)  # type: ignore[union-attr]


@register_op
class Return(Op):
    name = "tt.return"
    terminator = True


@register_op
class Call(Op):
    name = "tt.call"

    @property
    def callee(self) -> str:
        a = self.attrs["callee"]
        assert isinstance(a, SymbolRefAttr)
        return a.name


# ---------------------------------------------------------------------------------------------------------------------
# Program ids and tensor creation / shape ops


@register_op
class GetProgramId(Op):
    name = "tt.get_program_id"
    pure = True

    @property
    def axis(self) -> int:
        return _enum(self, "axis").axis


@register_op
class GetNumPrograms(Op):
    name = "tt.get_num_programs"
    pure = True

    @property
    def axis(self) -> int:
        return _enum(self, "axis").axis


@register_op
class MakeRange(Op):
    name = "tt.make_range"
    pure = True

    @property
    def start(self) -> int:
        return _int(self, "start")

    @property
    def end(self) -> int:
        return _int(self, "end")


class ShapeOp(Op):
    """Ops that rearrange tensor elements without computing new values."""

    pure = True

    @property
    def src(self) -> Value:
        return self.operands[0]


@register_op
class Splat(ShapeOp):
    name = "tt.splat"


@register_op
class Unsplat(ShapeOp):
    name = "tt.unsplat"


@register_op
class Broadcast(ShapeOp):
    name = "tt.broadcast"


@register_op
class ExpandDims(ShapeOp):
    name = "tt.expand_dims"

    @property
    def axis(self) -> int:
        return _int(self, "axis")


@register_op
class Reshape(ShapeOp):
    name = "tt.reshape"

    @property
    def allow_reorder(self) -> bool:
        return _bool(self, "allow_reorder")


@register_op
class Trans(ShapeOp):
    name = "tt.trans"

    @property
    def order(self) -> tuple[int, ...]:
        a = self.attrs["order"]
        assert isinstance(a, DenseArrayAttr)
        return a.values


@register_op
class Join(ShapeOp):
    name = "tt.join"


@register_op
class Split(ShapeOp):
    name = "tt.split"


@register_op
class Cat(ShapeOp):
    name = "tt.cat"


@register_op
class Gather(Op):
    name = "tt.gather"
    pure = True

    @property
    def axis(self) -> int:
        return _int(self, "axis")


@register_op
class Histogram(Op):
    name = "tt.histogram"
    pure = True


# ---------------------------------------------------------------------------------------------------------------------
# Memory


@register_op
class AddPtr(BinaryOp):
    """`tt.addptr ptr, offset`: pointer plus offset counted in pointee elements."""

    name = "tt.addptr"

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def offset(self) -> Value:
        return self.operands[1]


def _cache_hints(op: Op) -> tuple[CacheModifier, EvictionPolicy]:
    """Cache modifier and eviction policy of a load/store, from either spelling: 3.7 keeps them as `cache`/`evict`
    EnumAttrs, 3.9 as one `#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>` OpaqueAttr."""
    cache = _enum(op, "cache", CacheModifier.NONE)
    evict = _enum(op, "evict", EvictionPolicy.NORMAL)
    policy = op.attrs.get("cachePolicy")
    if isinstance(policy, OpaqueAttr):
        fields = dict(re.findall(r"(\w+)\s*=\s*(\w+)", policy.text))
        if "cache_modifier" in fields:
            cache = CacheModifier(fields["cache_modifier"])
        if "eviction_policy" in fields:
            evict = EvictionPolicy(fields["eviction_policy"])
    return cache, evict


@register_op
class Load(Op):
    """`tt.load ptr[, mask[, other]]`; operand roles come from `operandSegmentSizes` or the operand count."""

    name = "tt.load"

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def mask(self) -> Value | None:
        return self.operands[1] if len(self.operands) > 1 else None

    @property
    def other(self) -> Value | None:
        return self.operands[2] if len(self.operands) > 2 else None

    @property
    def is_volatile(self) -> bool:
        return _bool(self, "isVolatile")

    @property
    def padding(self) -> PaddingOption | None:
        return _enum(self, "padding")

    @property
    def cache_modifier(self) -> CacheModifier:
        return _cache_hints(self)[0]

    @property
    def eviction_policy(self) -> EvictionPolicy:
        return _cache_hints(self)[1]


@register_op
class Store(Op):
    name = "tt.store"

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def value(self) -> Value:
        return self.operands[1]

    @property
    def mask(self) -> Value | None:
        return self.operands[2] if len(self.operands) > 2 else None

    @property
    def cache_modifier(self) -> CacheModifier:
        return _cache_hints(self)[0]

    @property
    def eviction_policy(self) -> EvictionPolicy:
        return _cache_hints(self)[1]


@register_op
class AtomicRMW(Op):
    """`tt.atomic_rmw op, sem, scope, ptr, val[, mask]`."""

    name = "tt.atomic_rmw"

    @property
    def rmw_op(self) -> RMWOp:
        return _enum(self, "atomic_rmw_op")

    @property
    def sem(self) -> MemSemantic:
        return _enum(self, "sem", MemSemantic.ACQUIRE_RELEASE)

    @property
    def scope(self) -> MemSyncScope:
        return _enum(self, "scope", MemSyncScope.GPU)

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def val(self) -> Value:
        return self.operands[1]

    @property
    def mask(self) -> Value | None:
        return self.operands[2] if len(self.operands) > 2 else None


@register_op
class AtomicCAS(Op):
    """`tt.atomic_cas sem, scope, ptr, cmp, val`."""

    name = "tt.atomic_cas"

    @property
    def sem(self) -> MemSemantic:
        return _enum(self, "sem", MemSemantic.ACQUIRE_RELEASE)

    @property
    def scope(self) -> MemSyncScope:
        return _enum(self, "scope", MemSyncScope.GPU)


@register_op
class AtomicLoad(Op):
    """`tt.atomic_load sem, scope, ptr[, mask]` (Triton 3.9)."""

    name = "tt.atomic_load"

    @property
    def sem(self) -> MemSemantic:
        return _enum(self, "sem", MemSemantic.ACQUIRE)

    @property
    def scope(self) -> MemSyncScope:
        return _enum(self, "scope", MemSyncScope.GPU)

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def mask(self) -> Value | None:
        return self.operands[1] if len(self.operands) > 1 else None


@register_op
class AtomicStore(Op):
    """`tt.atomic_store sem, scope, ptr, value[, mask]` (Triton 3.9)."""

    name = "tt.atomic_store"

    @property
    def sem(self) -> MemSemantic:
        return _enum(self, "sem", MemSemantic.RELEASE)

    @property
    def scope(self) -> MemSyncScope:
        return _enum(self, "scope", MemSyncScope.GPU)

    @property
    def ptr(self) -> Value:
        return self.operands[0]

    @property
    def value(self) -> Value:
        return self.operands[1]

    @property
    def mask(self) -> Value | None:
        return self.operands[2] if len(self.operands) > 2 else None


@register_op
class AtomicPoll(Op):
    """`tt.atomic_poll sem, scope, ptr, expected[ timeout t]` -> i1 (Triton 3.9)."""

    name = "tt.atomic_poll"


@register_op
class MakeTensorDescriptor(Op):
    """`tt.make_tensor_descriptor base, [shape...], [strides...]`: operands (base, *shape, *strides)."""

    name = "tt.make_tensor_descriptor"

    @property
    def base(self) -> Value:
        return self.operands[0]

    @property
    def shape(self) -> list[Value]:
        return self.operands[1 : 1 + (len(self.operands) - 1) // 2]

    @property
    def strides(self) -> list[Value]:
        return self.operands[1 + (len(self.operands) - 1) // 2 :]


@register_op
class DescriptorLoad(Op):
    """`tt.descriptor_load desc[indices...]`: operands (desc, *indices)."""

    name = "tt.descriptor_load"

    @property
    def desc(self) -> Value:
        return self.operands[0]

    @property
    def indices(self) -> list[Value]:
        return self.operands[1:]


@register_op
class DescriptorReduce(Op):
    """`tt.descriptor_reduce kind, desc[indices...], src`: operands (desc, src, *indices); `kind` is an OpaqueAttr
    keyword (add, min, max, inc, dec, and, or, xor)."""

    name = "tt.descriptor_reduce"


@register_op
class DescriptorStore(Op):
    """`tt.descriptor_store desc[indices...], src`: MLIR's operand order is (desc, src, *indices), not the text's."""

    name = "tt.descriptor_store"

    @property
    def desc(self) -> Value:
        return self.operands[0]

    @property
    def src(self) -> Value:
        return self.operands[1]

    @property
    def indices(self) -> list[Value]:
        return self.operands[2:]


# ---------------------------------------------------------------------------------------------------------------------
# Reductions, scans, dot


@register_op
class Reduce(Op):
    """`tt.reduce` over `axis` with a combine region taking 2×N scalars and yielding N (`tt.reduce.return`)."""

    name = "tt.reduce"
    pure = True

    @property
    def axis(self) -> int:
        return _int(self, "axis")

    @property
    def combine(self) -> Block:
        return self.regions[0].entry


@register_op
class ReduceReturn(Op):
    name = "tt.reduce.return"
    terminator = True


@register_op
class Scan(Op):
    name = "tt.scan"
    pure = True

    @property
    def axis(self) -> int:
        return _int(self, "axis")

    @property
    def reverse(self) -> bool:
        return _bool(self, "reverse")

    @property
    def combine(self) -> Block:
        return self.regions[0].entry


@register_op
class ScanReturn(Op):
    name = "tt.scan.return"
    terminator = True


@register_op
class Dot(Op):
    """`tt.dot a, b, c` = a @ b + c."""

    name = "tt.dot"
    pure = True

    @property
    def input_precision(self) -> InputPrecision:
        return _enum(self, "inputPrecision", InputPrecision.IEEE)

    @property
    def max_num_imprecise_acc(self) -> int:
        return _int(self, "maxNumImpreciseAcc", 0)


@register_op
class DotScaled(Op):
    name = "tt.dot_scaled"
    pure = True


# ---------------------------------------------------------------------------------------------------------------------
# Debug ops


@register_op
class Print(Op):
    name = "tt.print"

    @property
    def prefix(self) -> str:
        a = self.attrs.get("prefix")
        return a.value if isinstance(a, StringAttr) else ""

    @property
    def hex(self) -> bool:
        return _bool(self, "hex")


@register_op
class Assert(Op):
    name = "tt.assert"

    @property
    def message(self) -> str:
        a = self.attrs.get("message")
        return a.value if isinstance(a, StringAttr) else ""


@register_op
class Barrier(Op):
    """`ttg.barrier` (3.9) from `tl.debug_barrier()`: every thread of one program meets here."""

    name = "ttg.barrier"


@register_op
class GpuBarrier(Barrier):
    """`gpu.barrier`, the 3.7 spelling of the same barrier."""

    name = "gpu.barrier"


@register_op
class Assume(Op):
    """`llvm.intr.assume %cond` from `tl.assume`: a hint the condition holds."""

    name = "llvm.intr.assume"


# ---------------------------------------------------------------------------------------------------------------------
# Structured and unstructured control flow


@register_op
class For(Op):
    """`scf.for %iv = lb to ub step s iter_args(...)`: operands (lb, ub, step, *inits); body args (iv, *iter)."""

    name = "scf.for"

    @property
    def lower(self) -> Value:
        return self.operands[0]

    @property
    def upper(self) -> Value:
        return self.operands[1]

    @property
    def step(self) -> Value:
        return self.operands[2]

    @property
    def inits(self) -> list[Value]:
        return self.operands[3:]

    @property
    def body(self) -> Block:
        return self.regions[0].entry

    @property
    def unsigned_cmp(self) -> bool:
        return _bool(self, "unsignedCmp")


@register_op
class If(Op):
    """`scf.if cond -> (types)`; regions: then, else (the else region may be empty)."""

    name = "scf.if"

    @property
    def condition(self) -> Value:
        return self.operands[0]

    @property
    def then_block(self) -> Block:
        return self.regions[0].entry

    @property
    def else_block(self) -> Block | None:
        return self.regions[1].entry if len(self.regions) > 1 and self.regions[1].blocks else None


@register_op
class While(Op):
    """`scf.while`: regions before (ends in scf.condition) and after (ends in scf.yield)."""

    name = "scf.while"

    @property
    def before(self) -> Block:
        return self.regions[0].entry

    @property
    def after(self) -> Block:
        return self.regions[1].entry


@register_op
class Yield(Op):
    name = "scf.yield"
    terminator = True


@register_op
class Condition(Op):
    name = "scf.condition"
    terminator = True


@register_op
class Br(Op):
    name = "cf.br"
    terminator = True


@register_op
class CondBr(Op):
    """`cf.cond_br cond, ^a(args), ^b(args)`; `attrs['operandSegmentSizes']` splits the operands."""

    name = "cf.cond_br"
    terminator = True


@register_op
class CfAssert(Op):
    name = "cf.assert"
