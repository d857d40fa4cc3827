"""The `scf` dialect: structured loops and conditionals. Their syntax binds region arguments to operands, so each
keeps a `parse_custom`/`print_custom` pair on the class."""

from __future__ import annotations

from typing import Any

from ..attrs import UnitAttr
from ..core import Block, IRVerificationError, Op, Region, register_op
from ..fields import FlagProp, Operand, VarOperand
from ..types import FunctionType, IndexType, Type
from .tt import ReturnLike, check_yield


@register_op
class Yield(ReturnLike):
    name = "scf.yield"
    implicit_terminator = True


@register_op
class Condition(ReturnLike):
    """`scf.condition(%cond) %a, %b : T, U`: ends a while loop's before region."""

    name = "scf.condition"
    values = None  # type: ignore[assignment]
    condition = Operand()
    args = VarOperand()
    assembly_format = "`(`$condition`)` attr-dict ($args : type($args))?"


def _results(op: Any) -> list[Type]:
    return [r.type for r in op.results]


def _ensure_yield(region: Region, st: Any) -> None:
    """Append the `scf.yield` MLIR leaves implicit in result-less `scf.for`/`scf.if` regions."""
    if not region.blocks:
        region.add_block(Block())
    block = region.blocks[-1]
    last = block.ops[-1] if block.ops else None
    if last is None or not (last.terminator or last.op_name.endswith("yield")):
        y = Yield()
        block.append(y)
        st.inherit.append(y)


@register_op
class For(Op):
    """`scf.for %iv = lb to ub step s iter_args(...)`: operands (lb, ub, step, *inits); body args (iv, *iter)."""

    name = "scf.for"
    lower = Operand()
    upper = Operand()
    step = Operand()
    inits = VarOperand()
    unsigned_cmp = FlagProp("unsignedCmp")

    @property
    def body(self) -> Block:
        return self.regions[0].entry

    @classmethod
    def parse_custom(cls, p: Any, st: Any) -> None:
        """`[unsigned] %iv = %lb to %ub step %s [iter_args(%a = %init, ...) -> (types)] [: T] {body} [attr-dict]`."""
        if p.accept_keyword("unsigned"):
            st.attrs["unsignedCmp"] = UnitAttr()
        iv, iv_pos = p.value_name()
        p.expect("=")
        st.operands = [p.operand()]
        p.expect_keyword("to")
        st.operands.append(p.operand())
        p.expect_keyword("step")
        st.operands.append(p.operand())
        iters: list[tuple[str, int]] = []
        if p.accept_keyword("iter_args"):
            p.expect("(")
            while True:
                name, pos = p.value_name()
                p.expect("=")
                st.operands.append(p.operand())
                iters.append((name, pos))
                if p.accept(")"):
                    break
                p.expect(",")
            p.expect("->")
            st.result_types = p.result_type_list()
        iv_type: Type = IndexType()
        if p.accept(":"):
            iv_type = p.type()
        if len(st.result_types) != len(iters):
            raise p.error(f"scf.for has {len(iters)} iter_args but {len(st.result_types)} result types")
        inherit = p.INHERIT
        args = [(iv, iv_type, inherit, iv_pos)] + [(n, t, inherit, pos) for (n, pos), t in zip(iters, st.result_types)]
        body = p.region(args, st.inherit)
        st.regions = [body]
        if not iters:
            _ensure_yield(body, st)
        p.attr_dict(st.attrs)

    def print_custom(self, w: Any) -> str | None:
        if len(self.operands) < 3 or len(self.regions) != 1 or not self.regions[0].blocks:
            return None
        body = self.body
        if len(body.args) != len(self.operands) - 2:
            return None
        iv, iters = body.args[0], body.args[1:]
        text = " unsigned" if self.unsigned_cmp else ""
        text += f" {w.v(iv)} = {w.v(self.lower)} to {w.v(self.upper)} step {w.v(self.step)}"
        if iters:
            pairs = ", ".join(f"{w.v(a)} = {w.v(x)}" for a, x in zip(iters, self.inits))
            text += f" iter_args({pairs}) -> ({w.types(_results(self))})"
        text += f"  : {iv.type}" if not isinstance(iv.type, IndexType) else ""
        text += " " + w.region(self.regions[0], print_entry_args=False, omit_empty_yield=not self.results)
        return text + w.attr_dict(self.attrs, ("unsignedCmp",))

    def verify_(self) -> None:
        if len(self.regions) != 1 or len(self.regions[0].blocks) != 1:
            raise IRVerificationError("needs one single-block region", self)
        body, inits = self.body, self.inits
        if len(self.results) != len(inits) or len(body.args) != 1 + len(inits):
            raise IRVerificationError(
                f"{len(inits)} iter_args, {len(self.results)} results, {len(body.args)} body arguments", self
            )
        types = [x.type for x in inits]
        if [a.type for a in body.args[1:]] != types or _results(self) != types:
            raise IRVerificationError("iter_args, initial values and results disagree on types", self)
        check_yield(self, body, Yield, _results(self), "the loop body")


@register_op
class If(Op):
    """`scf.if cond -> (types)`; regions: then, else (the else region may be empty)."""

    name = "scf.if"
    condition = Operand()

    @property
    def then_block(self) -> Block:
        return self.regions[0].entry

    @property
    def else_block(self) -> Block | None:
        return self.regions[1].entry if len(self.regions) > 1 and self.regions[1].blocks else None

    @classmethod
    def parse_custom(cls, p: Any, st: Any) -> None:
        """`%cond [-> (types)] {then} [else {else}] [attr-dict]`."""
        st.operands = [p.operand()]
        if p.accept("->"):
            st.result_types = p.result_type_list()
        then = p.region(inherit=st.inherit)
        other = p.region(inherit=st.inherit) if p.accept_keyword("else") else Region()
        st.regions = [then, other]
        if not st.result_types:
            _ensure_yield(then, st)
            if other.blocks:
                _ensure_yield(other, st)
        p.attr_dict(st.attrs)

    def print_custom(self, w: Any) -> str | None:
        if len(self.operands) != 1 or len(self.regions) != 2:
            return None
        text = f" {w.v(self.condition)}"
        if self.results:
            text += f" -> ({w.types(_results(self))})"
        text += " " + w.region(self.regions[0], omit_empty_yield=not self.results)
        if self.regions[1].blocks:
            text += " else " + w.region(self.regions[1], omit_empty_yield=not self.results)
        return text + w.attr_dict(self.attrs)

    def verify_(self) -> None:
        if len(self.regions) != 2 or not self.regions[0].blocks:
            raise IRVerificationError("needs a then region and an (optional) else region", self)
        check_yield(self, self.then_block, Yield, _results(self), "the then region")
        if self.else_block is not None:
            check_yield(self, self.else_block, Yield, _results(self), "the else region")
        elif self.results:
            raise IRVerificationError("has results but no else region", self)


@register_op
class While(Op):
    """`scf.while`: regions before (ends in scf.condition) and after (ends in scf.yield)."""

    name = "scf.while"
    inits = VarOperand()

    @property
    def before(self) -> Block:
        return self.regions[0].entry

    @property
    def after(self) -> Block:
        return self.regions[1].entry

    @classmethod
    def parse_custom(cls, p: Any, st: Any) -> None:
        """`[(%a = %init, ...)] : (types) -> (types) {before} do {after} [attributes {attr-dict}]` (MLIR's
        attr-dict-with-keyword; Triton puts `llvm.loop_annotation` there for `tl.condition(disable_licm=True)`)."""
        inits: list[tuple[str, int]] = []
        if p.accept("("):
            while not p.accept(")"):
                name, pos = p.value_name()
                p.expect("=")
                st.operands.append(p.operand())
                inits.append((name, pos))
                p.accept(",")
        p.expect(":")
        ft = p.function_type()
        if len(ft.inputs) != len(inits):
            raise p.error(f"scf.while has {len(inits)} initial values but {len(ft.inputs)} types")
        st.result_types = list(ft.results)
        before = p.region([(n, t, p.INHERIT, pos) for (n, pos), t in zip(inits, ft.inputs)], st.inherit)
        p.expect_keyword("do")
        after = p.region(inherit=st.inherit)
        if not after.blocks:
            after.add_block(Block(ft.results))
        st.regions = [before, after]
        p.accept_keyword("attributes")
        p.attr_dict(st.attrs)

    def print_custom(self, w: Any) -> str | None:
        if len(self.regions) != 2 or not self.regions[0].blocks or not self.regions[1].blocks:
            return None
        before = self.before
        if len(before.args) != len(self.operands):
            return None
        text = ""
        if self.operands:
            text += " (" + ", ".join(f"{w.v(a)} = {w.v(x)}" for a, x in zip(before.args, self.operands)) + ")"
        ft = FunctionType(tuple(v.type for v in self.operands), tuple(_results(self)))
        text += f" : ({w.types(ft.inputs)}) -> ({w.types(ft.results)}) " + w.region(self.regions[0], False)
        text += " do " + w.region(self.regions[1])
        attrs = w.attr_dict(self.attrs)
        return text + (" attributes" + attrs if attrs else "")

    def verify_(self) -> None:
        if len(self.regions) != 2 or not self.regions[0].blocks or not self.regions[1].blocks:
            raise IRVerificationError("needs a before and an after region", self)
        before, after = self.before, self.after
        if [a.type for a in before.args] != [x.type for x in self.operands]:
            raise IRVerificationError("before-region arguments disagree with the initial values", self)
        cond = before.ops[-1] if before.ops else None
        if not isinstance(cond, Condition):
            raise IRVerificationError("the before region must end with scf.condition", self)
        if [x.type for x in cond.args] != _results(self) or [a.type for a in after.args] != _results(self):
            raise IRVerificationError("forwarded values disagree with the results / after-region arguments", cond)
        check_yield(self, after, Yield, [x.type for x in self.operands], "the after region")
