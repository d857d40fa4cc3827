"""Ops of other dialects that Triton kernels carry into TTIR: barriers, assumptions, poison values."""

from __future__ import annotations

from typing import Any

from ..attrs import StringAttr
from ..core import Op, register_op
from ..fields import Operand, Result, StrProp


@register_op
class Barrier(Op):
    """`ttg.barrier local|global_read` (3.9) from `tl.debug_barrier()`: every thread of one program meets here; the
    address spaces are kept as the string attribute `spaces`."""

    name = "ttg.barrier"
    spaces = StrProp()
    assembly_format = "custom<spaces>($spaces) attr-dict"

    @classmethod
    def parse_spaces(cls, p: Any, st: Any) -> None:
        words: list[str] = []
        while not p.at_op_end() and not p.at("{"):
            words.append(p.keyword())
            if not p.accept("|"):
                break
        if words:
            st.attrs["spaces"] = StringAttr("|".join(words))

    def print_spaces(self, w: Any) -> str:
        return self.spaces


@register_op
class GpuBarrier(Barrier):
    """`gpu.barrier`, the 3.7 spelling of the same barrier."""

    name = "gpu.barrier"
    assembly_format = "attr-dict"


@register_op
class Assume(Op):
    """`llvm.intr.assume %cond` from `tl.assume`: a hint the condition holds (printed in the generic form)."""

    name = "llvm.intr.assume"
    condition = Operand()


@register_op
class Poison(Op):
    """`ub.poison : T`: a value of type T that nothing may depend on (Triton's placeholder for values a path never
    defines, e.g. the results of a function that only returns early); backends give it any value (zero)."""

    name = "ub.poison"
    pure = True
    result = Result()
    assembly_format = "attr-dict : type($result)"
