"""The `tt` dialect (Triton's TTIR ops), each op one declared class: fields, custom syntax, verifier."""

from __future__ import annotations

from typing import Any

from ..attrs import ArrayAttr, Attribute, DictAttr, StringAttr, TypeAttr
from ..core import Block, IRVerificationError, Op, Region, Value, register_op
from ..enums import (
    InputPrecision,
    ProgramDim,
    PropagateNan,
    RoundingMode,
)
from ..fields import (
    ArrayProp,
    BoolProp,
    EnumProp,
    FlagProp,
    IntProp,
    KeywordProp,
    ListProp,
    Operand,
    OptOperand,
    Result,
    StrProp,
    SymbolProp,
    TypeProp,
    VarOperand,
)
from ..types import FunctionType, Type
from .arith import CastOp, ElementwiseOp, FloatBinaryOp, FloatUnaryOp, IntBinaryOp, check_same_types

# ---------------------------------------------------------------------------------------------------------------------
# Elementwise


@register_op
class PreciseDivF(FloatBinaryOp):
    name = "tt.precise_divf"


@register_op
class ApproxDivF(FloatBinaryOp):
    name = "tt.approx_divf"


@register_op
class MulhiUI(IntBinaryOp):
    """The high half of the unsigned double-width product (`tl.umulhi`)."""

    name = "tt.mulhiui"


@register_op
class PreciseSqrt(FloatUnaryOp):
    name = "tt.precise_sqrt"
    function = "sqrt"


class _TTCast(CastOp):
    assembly_format = "$src attr-dict : type($src) -> type($result)"


@register_op
class TTBitcast(_TTCast):
    name = "tt.bitcast"


@register_op
class IntToPtr(_TTCast):
    name = "tt.int_to_ptr"


@register_op
class PtrToInt(_TTCast):
    name = "tt.ptr_to_int"


@register_op
class FpToFp(CastOp):
    name = "tt.fp_to_fp"
    rounding = EnumProp(RoundingMode)
    assembly_format = "$src attr-dict (, rounding = $rounding)? : type($src) -> type($result)"


@register_op
class ClampF(ElementwiseOp):
    name = "tt.clampf"
    x = Operand()
    min = Operand()
    max = Operand()
    result = Result()
    propagate_nan = EnumProp(PropagateNan, "propagateNan", default=PropagateNan.NONE)
    assembly_format = "$x, $min, $max, propagateNan = $propagate_nan attr-dict : type($result)"

    def verify_(self) -> None:
        check_same_types(self, [self.x, self.min, self.max, self.result])


@register_op
class ExternElementwise(ElementwiseOp):
    """A call of a device-library function (`__nv_powf`) per element."""

    name = "tt.extern_elementwise"
    args = VarOperand()
    result = Result()
    symbol = StrProp(required=True)
    libname = StrProp()
    libpath = StrProp()
    is_pure = BoolProp("pure")
    assembly_format = "$args attr-dict : functional-type"


@register_op
class ElementwiseInlineAsm(Op):
    name = "tt.elementwise_inline_asm"
    args = VarOperand()
    asm_string = StrProp(required=True)
    constraints = StrProp()
    is_pure = BoolProp("pure")
    packed_element = IntProp(default=1)
    assembly_format = "$asm_string attr-dict ($args : type($args))? -> type($results)"


# ---------------------------------------------------------------------------------------------------------------------
# Functions and calls


@register_op
class Func(Op):
    """`tt.func`; one region whose entry block's arguments are the kernel parameters."""

    name = "tt.func"
    isolated_from_above = True
    sym_name = StrProp(required=True)
    function_type = TypeProp(required=True)
    sym_visibility = StrProp()
    arg_attrs = ListProp()
    res_attrs = ListProp()

    @property
    def is_public(self) -> bool:
        return self.sym_visibility != "private"

    @property
    def body(self) -> Block:
        return self.regions[0].entry

    @property
    def args(self) -> list:
        return self.body.args

    def arg_attr(self, index: int, name: str) -> Attribute | None:
        a = self.arg_attrs
        if a is None or index >= len(a.values):
            return None
        return a.values[index].get(name)  # type: ignore[union-attr]

    @classmethod
    def parse_custom(cls, p: Any, st: Any) -> None:
        """`[visibility] @name(%a: T {attrs} loc(..), ...) [-> results] [attributes {...}] [{body}]`."""
        for word in ("public", "private", "nested"):
            if p.accept_keyword(word):
                st.attrs["sym_visibility"] = StringAttr(word)
                break
        st.attrs["sym_name"] = StringAttr(p.symbol())
        p.expect("(")
        args: list[tuple[str, Type, Any, int]] = []
        arg_attrs: list[DictAttr] = []
        named = p.peek() == "%"
        if not p.accept(")"):
            while True:
                if named:
                    name, pos = p.value_name()
                    p.expect(":")
                else:
                    name, pos = "", p.pos
                t = p.type()
                d: dict[str, Attribute] = {}
                p.attr_dict(d)
                arg_attrs.append(DictAttr(tuple(d.items())))
                args.append((name, t, p.opt_loc(), pos))
                if p.accept(")"):
                    break
                p.expect(",")
        results: list[Type] = []
        res_attrs: list[DictAttr] = []
        if p.accept("->"):
            if p.accept("("):
                while not p.accept(")"):
                    results.append(p.type())
                    d = {}
                    p.attr_dict(d)
                    res_attrs.append(DictAttr(tuple(d.items())))
                    p.accept(",")
            else:
                results.append(p.type())
        st.attrs["function_type"] = TypeAttr(FunctionType(tuple(t for _, t, _, _ in args), tuple(results)))
        if any(a.entries for a in arg_attrs):
            st.attrs["arg_attrs"] = ArrayAttr(tuple(arg_attrs))
        if any(a.entries for a in res_attrs):
            st.attrs["res_attrs"] = ArrayAttr(tuple(res_attrs))
        if p.accept_keyword("attributes"):
            p.attr_dict(st.attrs)
        if p.at("{"):
            if not named and args:
                raise p.error("a function with a body needs named arguments")
            st.regions = [p.region(args, st.inherit)]
        else:
            st.regions = [Region()]

    def print_custom(self, w: Any) -> str | None:
        ft = self.attrs.get("function_type")
        if not isinstance(self.attrs.get("sym_name"), StringAttr) or not isinstance(ft, TypeAttr):
            return None
        ft = ft.type
        if not isinstance(ft, FunctionType):
            return None
        vis = self.attrs.get("sym_visibility")
        head = f" {vis.value}" if isinstance(vis, StringAttr) else ""
        arg_attrs, res_attrs = self.arg_attrs, self.res_attrs

        def extra(arr: Any, i: int) -> str:
            if (
                arr is not None
                and i < len(arr.values)
                and isinstance(arr.values[i], DictAttr)
                and arr.values[i].entries
            ):
                return " " + w.attr(arr.values[i])
            return ""

        body = self.regions[0] if self.regions else None
        entry = body.blocks[0] if body is not None and body.blocks else None
        if entry is not None:
            if len(entry.args) != len(ft.inputs):
                return None
            args = ", ".join(f"{w.v(a)}: {a.type}{extra(arg_attrs, i)}{w.loc(a.loc)}" for i, a in enumerate(entry.args))
        else:
            args = ", ".join(f"{t}{extra(arg_attrs, i)}" for i, t in enumerate(ft.inputs))
        text = f"{head} @{w.sym(self.sym_name)}({args})"
        if ft.results:
            if len(ft.results) == 1 and not extra(res_attrs, 0):
                text += f" -> {ft.results[0]}"
            else:
                text += " -> (" + ", ".join(f"{t}{extra(res_attrs, i)}" for i, t in enumerate(ft.results)) + ")"
        text += w.attr_dict(self.attrs, tuple(self.attr_defs), prefix=" attributes ")
        if entry is not None:
            text += " " + w.region(body, print_entry_args=False)
        return text

    def verify_(self) -> None:
        ft = self.function_type
        if not isinstance(ft, FunctionType):
            raise IRVerificationError(f"function_type is {ft}, not a function type", self)
        if self.regions and self.regions[0].blocks:
            if [a.type for a in self.args] != list(ft.inputs):
                raise IRVerificationError("entry block arguments disagree with the function type", self)
            for block in self.regions[0].blocks:
                term = block.ops[-1] if block.ops else None
                if isinstance(term, Return) and [x.type for x in term.operands] != list(ft.results):
                    got = ", ".join(str(x.type) for x in term.operands)
                    raise IRVerificationError(f"returns ({got}) from a function of type {ft}", term)


class ReturnLike(Op):
    """A terminator forwarding values: `attr-dict [%a, %b : T, U]`."""

    terminator = True
    values = VarOperand()
    assembly_format = "attr-dict ($values : type($values))?"


@register_op
class Return(ReturnLike):
    name = "tt.return"


@register_op
class Call(Op):
    name = "tt.call"
    callee = SymbolProp(required=True)
    args = VarOperand()
    assembly_format = "$callee`(`$args`)` attr-dict : functional-type"


# ---------------------------------------------------------------------------------------------------------------------
# Program ids and tensor creation / shape ops


class _ProgramDimOp(Op):
    pure = True
    dim = EnumProp(ProgramDim, "axis", required=True)
    result = Result()
    assembly_format = "$dim attr-dict : type($result)"

    @property
    def axis(self) -> int:
        return self.dim.axis


@register_op
class GetProgramId(_ProgramDimOp):
    name = "tt.get_program_id"


@register_op
class GetNumPrograms(_ProgramDimOp):
    name = "tt.get_num_programs"


@register_op
class MakeRange(Op):
    name = "tt.make_range"
    pure = True
    start = IntProp(required=True)
    end = IntProp(required=True)
    result = Result()
    assembly_format = "attr-dict : type($result)"


class ShapeOp(Op):
    """Ops that rearrange tensor elements without computing new values: `%x attr-dict : T -> R`."""

    pure = True
    src = Operand()
    result = Result()
    assembly_format = "$src attr-dict : type($src) -> type($result)"


@register_op
class Splat(ShapeOp):
    name = "tt.splat"


@register_op
class Unsplat(ShapeOp):
    name = "tt.unsplat"
    assembly_format = "$src attr-dict : type($src)"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return [types["src"][0].element]


@register_op
class Broadcast(ShapeOp):
    name = "tt.broadcast"


@register_op
class ExpandDims(ShapeOp):
    name = "tt.expand_dims"
    axis = IntProp(required=True)


@register_op
class Reshape(ShapeOp):
    name = "tt.reshape"
    allow_reorder = FlagProp()
    efficient_layout = FlagProp()
    assembly_format = (
        "$src (allow_reorder $allow_reorder)? (efficient_layout $efficient_layout)? attr-dict "
        ": type($src) -> type($result)"
    )


@register_op
class Trans(ShapeOp):
    name = "tt.trans"
    order = ArrayProp(required=True)


class _PairOp(ShapeOp):
    """`%a, %b : T -> R` (only the first operand's type is spelled)."""

    lhs = Operand()
    rhs = Operand()
    assembly_format = "$lhs, $rhs attr-dict : type($lhs) -> type($result)"

    @property
    def src(self) -> Value:  # type: ignore[override]
        return self.lhs


@register_op
class Join(_PairOp):
    name = "tt.join"


@register_op
class Cat(_PairOp):
    name = "tt.cat"


@register_op
class Split(ShapeOp):
    """`tt.split %x : tensor<..x2xT> -> tensor<..xT>`: two results of the one spelled type."""

    name = "tt.split"
    result = None  # type: ignore[assignment]
    out_lhs = Result()
    out_rhs = Result()
    assembly_format = "$src attr-dict : type($src) -> type($out_lhs)"


@register_op
class Gather(Op):
    name = "tt.gather"
    pure = True
    src = Operand()
    indices = Operand()
    result = Result()
    axis = IntProp(required=True)
    assembly_format = "$src[$indices] attr-dict : functional-type"


@register_op
class Histogram(Op):
    name = "tt.histogram"
    pure = True
    src = Operand()
    mask = OptOperand()
    result = Result()
    assembly_format = "$src (, $mask)? attr-dict : type($src) -> type($result)"


# ---------------------------------------------------------------------------------------------------------------------
# Reductions, scans, dot (Triton prints tt.reduce and tt.scan in the generic form)


class _Combining(Op):
    """`tt.reduce` / `tt.scan` over `axis` with a combine region taking 2×N scalars and yielding N."""

    pure = True
    srcs = VarOperand()
    axis = IntProp(required=True)
    combine_return: type[Op] = Op

    @property
    def combine(self) -> Block:
        """The combine region's block."""
        return self.regions[0].entry

    @property
    def single_op(self) -> Op | None:
        """The combine's one op when the region is exactly `return op(a, b)` over its two arguments (either order):
        a combine a backend may apply to whole vectors of partials, op by op. None otherwise."""
        block = self.combine
        body = combine_body(block, 1)
        if body is None or block.ops[-1].operands[0] is not body[0].results[0]:
            return None
        (op,) = body
        if len(op.operands) != 2 or {id(v) for v in op.operands} != {id(a) for a in block.args}:
            return None
        return op

    def verify_(self) -> None:
        if len(self.regions) != 1 or not self.regions[0].blocks:
            raise IRVerificationError("needs a combine region", self)
        n = len(self.operands)
        combine = self.combine
        if len(self.results) != n or len(combine.args) != 2 * n:
            raise IRVerificationError(
                f"{n} operands, {len(self.results)} results, {len(combine.args)} combine arguments "
                f"(expected {n}, {2 * n})",
                self,
            )
        check_yield(self, combine, self.combine_return, [x.type.element for x in self.operands], "the combine region")


def combine_body(block: Block, max_ops: int) -> list[Op] | None:
    """The ops of a combine region of two arguments and one result computed by at most `max_ops` ops (at least
    one), each with one result and no region, reading only the arguments and earlier results; None otherwise. A
    backend with a vector form of every op in it may apply the region to whole vectors of partials, op by op."""
    if len(block.args) != 2 or len(block.ops) < 2:
        return None
    *body, ret = block.ops
    if len(ret.operands) != 1 or len(body) > max_ops:
        return None
    known = {id(a) for a in block.args}
    for op in body:
        if op.regions or len(op.results) != 1 or any(id(v) not in known for v in op.operands):
            return None
        known.add(id(op.results[0]))
    return body if id(ret.operands[0]) in known else None


def check_yield(op: Op, block: Block, cls: type[Op], types: list[Type], what: str) -> None:
    """`block` ends in a `cls` terminator forwarding values of `types`."""
    term = block.ops[-1] if block.ops else None
    if not isinstance(term, cls):
        raise IRVerificationError(f"{what} must end with {cls.name}, not {term.op_name if term else 'nothing'}", op)
    got = [v.type for v in term.operands]
    if got != types:
        shown = ", ".join(map(str, got)), ", ".join(map(str, types))
        raise IRVerificationError(f"yields ({shown[0]}) but {op.op_name} expects ({shown[1]})", term)


@register_op
class ReduceReturn(ReturnLike):
    """Ends a reduce's combine region: the combined values."""

    name = "tt.reduce.return"


@register_op
class ScanReturn(ReturnLike):
    """Ends a scan's combine region: the combined values."""

    name = "tt.scan.return"


@register_op
class Reduce(_Combining):
    """Reduces its operands along `axis` with the combine region (args: n accumulated values, then n new ones)."""

    name = "tt.reduce"
    combine_return = ReduceReturn


@register_op
class Scan(_Combining):
    """Inclusive scan of its operands along `axis` (from the end when `reverse`) with the combine region."""

    name = "tt.scan"
    reverse = BoolProp()
    combine_return = ScanReturn


@register_op
class Dot(Op):
    """`tt.dot a, b, c` = a @ b + c."""

    name = "tt.dot"
    pure = True
    a = Operand()
    b = Operand()
    c = Operand()
    result = Result()
    input_precision = EnumProp(InputPrecision, "inputPrecision", default=InputPrecision.IEEE)
    max_num_imprecise_acc = IntProp("maxNumImpreciseAcc", default=0)
    assembly_format = (
        "$a, $b, $c (, inputPrecision = $input_precision)? attr-dict : type($a) * type($b) -> type($result)"
    )

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return types["c"][:1]

    def verify_(self) -> None:
        if self.c.type != self.result.type:
            raise IRVerificationError(f"accumulator {self.c.type} and result {self.result.type} differ", self)


@register_op
class DotScaled(Op):
    """`tt.dot_scaled a [scale sa], b [scale sb], c lhs = e4m3 rhs = e2m1`: a @ b + c, either side scaled per
    group of K; element kinds are kept as strings. MLIR's operand order is (a, b, c, a_scale, b_scale)."""

    name = "tt.dot_scaled"
    pure = True
    a = Operand()
    b = Operand()
    c = Operand()
    a_scale = OptOperand()
    b_scale = OptOperand()
    result = Result()
    a_elem_type = KeywordProp(required=True)
    b_elem_type = KeywordProp(required=True)
    assembly_format = (
        "$a (scale $a_scale)?, $b (scale $b_scale)?, $c lhs = $a_elem_type rhs = $b_elem_type attr-dict "
        ": type($a)(, type($a_scale))? * type($b)(, type($b_scale))? -> type($result)"
    )


@register_op
class MapElementwiseReturn(ReturnLike):
    name = "tt.map_elementwise.return"


@register_op
class MapElementwise(Op):
    """`tt.map_elementwise` (from `tl.map_elementwise(fn, *tensors)`): the region maps one element of each source
    (`pack` consecutive ones each, with pack > 1) to one element of each result; it may branch between blocks.
    Triton prints it in the generic form."""

    name = "tt.map_elementwise"
    pure = True
    srcs = VarOperand()
    pack = IntProp(default=1)

    @property
    def body(self) -> Region:
        return self.regions[0]

    def verify_(self) -> None:
        if len(self.regions) != 1 or not self.body.blocks:
            raise IRVerificationError("needs one region", self)
        entry, n = self.body.blocks[0], self.pack
        want = [v.type.element for v in self.srcs for _ in range(n)]
        if [a.type for a in entry.args] != want:
            got = ", ".join(str(a.type) for a in entry.args)
            raise IRVerificationError(f"region arguments ({got}) are not {n} element(s) of each source", self)
        elems = [r.type.element for r in self.results for _ in range(n)]
        for block in self.body.blocks:
            term = block.ops[-1] if block.ops else None
            if isinstance(term, MapElementwiseReturn) and [v.type for v in term.operands] != elems:
                raise IRVerificationError(f"returns ({', '.join(str(v.type) for v in term.operands)})", term)
        shapes = {v.type.shape for v in (*self.srcs, *self.results)}
        if len(shapes) > 1:
            raise IRVerificationError(f"sources and results of different shapes {sorted(shapes)}", self)


# ---------------------------------------------------------------------------------------------------------------------
# Debug ops


@register_op
class Print(Op):
    name = "tt.print"
    args = VarOperand()
    prefix = StrProp(required=True)
    hex = BoolProp()
    is_signed = ArrayProp("isSigned")
    assembly_format = "$prefix attr-dict (: $args : type($args))?"


@register_op
class Assert(Op):
    name = "tt.assert"
    condition = Operand()
    message = StrProp(required=True)
    assembly_format = "$condition, $message attr-dict : type($condition)"
