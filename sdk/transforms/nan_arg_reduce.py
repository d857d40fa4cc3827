"""`tl.argmax`/`tl.argmin` of floats skip NaN, as `tl.max`/`tl.min` do: the combine's compare makes NaN lose.

Triton's standard library reduces (value, index) pairs with `_argmax_combine`/`_argmin_combine`:
`gt = v1 > v2 or (v1 == v2 and i1 < i2)` (the tie only with `tie_break_left=True`), then `select(gt, ...)` of
both the value and the index. With a NaN operand every ordered compare is false, so the right-hand pair wins
whatever it holds: the combine is then neither associative nor commutative, and the index depends on the
reduction's order. `tl.max`/`tl.min` (`arith.maxnumf`/`minnumf`) skip NaN, and Triton's interpreter defines
`argmax`/`argmin` as numpy's `nanargmax`/`nanargmin`; upstream `test_argmax_argmin_with_nan` and
`test_argmax_argmin_tie_break_fast_with_nan` check that on rows of three elements (padded to four), where the
unmodified combine's answer depends only on the order a backend combines them in. Without this pass,
tests/test_opencl_upstream_regressions.py's 10 rows with NaN (3 to 512 elements; argmax and argmin, tie_break_left
True and False: 40 indices) got 20 indices wrong on cpu_ref (its 16-lane order; e.g. argmax [3, 5, 1, nan] = 3),
30 on opencl's one-work-item order and 22 on opencl at 128 work-items; each wrong index pointed at a NaN or at a
padded element while `tl.max` of the row gave a number.

The pass makes NaN the least element of the compare (for argmin the greatest): a pair whose value is a number
beats a pair whose value is NaN, from either side, and with `tie_break_left` two NaNs tie, so the left-most index
wins. With a tie break the combine is then a total order again (associative and commutative, as
`_add_reduction_docstr` requires of a reduction), so every backend and every reduction order gives the same index:
numpy's nanargmax/nanargmin for any row with a number in it, the first index for a tile of NaNs only (which numpy
refuses). Without a tie break (`tie_break_left=False`) the index is still a number's, any one of the equal extremes.

Only a two-operand `tt.reduce` whose combine region is exactly the standard library's (a float value, an integer
index; `cmpf ogt`/`olt` of the two values, optionally `ori` with `andi(cmpf oeq, cmpi slt)` of the indices; two
selects returned as value, index) is rewritten; integer argmax and any other combine keep their own semantics.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Block, Module, Op, Value
from ..ir.enums import CmpFPredicate, CmpIPredicate, EnumAttr
from ..ir.types import FloatType, IntType, i1
from ..pipeline import PassContext, ir_pass
from .build import Builder

#: the standard library's value compares: argmax keeps the left pair when `v1 > v2`, argmin when `v1 < v2`
ARG_COMPARES = (CmpFPredicate.OGT, CmpFPredicate.OLT)


def _defining(v: Value, cls: type[Op]) -> Op | None:
    op = getattr(v, "op", None)
    return op if isinstance(op, cls) else None


def _is_cmp(op: Op | None, cls: type[Op], preds: tuple, a: Value, b: Value) -> bool:
    return op is not None and isinstance(op, cls) and op.predicate in preds and list(op.operands) == [a, b]


def arg_combine(op: O.Reduce) -> tuple[Op, Op | None] | None:
    """(the value compare, the tie's `cmpf oeq` or None) when `op`'s combine region is the standard library's
    argmax/argmin combine of a float value and an integer index; else None."""
    if len(op.operands) != 2:
        return None
    block: Block = op.combine
    if len(block.args) != 4:
        return None
    av, ai, bv, bi = block.args
    if not (isinstance(av.type, FloatType) and isinstance(ai.type, IntType)):
        return None
    term = block.ops[-1]
    if not isinstance(term, O.ReduceReturn) or len(term.operands) != 2:
        return None
    sv, si = (_defining(v, O.Select) for v in term.operands)
    if sv is None or si is None or sv.operands[0] is not si.operands[0]:
        return None
    if list(sv.operands[1:]) != [av, bv] or list(si.operands[1:]) != [ai, bi]:
        return None
    pred = sv.operands[0]
    cmp = _defining(pred, O.CmpF)
    tie_eq = None
    matched: list[Op] = [sv, si, term]
    if cmp is None:
        orr = _defining(pred, O.OrI)
        if orr is None:
            return None
        x, y = (_defining(v, O.CmpF) for v in orr.operands)
        cmp, tie = (x, orr.operands[1]) if x is not None and x.predicate in ARG_COMPARES else (y, orr.operands[0])
        both = _defining(tie, O.AndI)
        if both is None:
            return None
        eq, lt = both.operands
        if _defining(eq, O.CmpI) is not None:
            eq, lt = lt, eq
        tie_eq = _defining(eq, O.CmpF)
        if not _is_cmp(tie_eq, O.CmpF, (CmpFPredicate.OEQ,), av, bv):
            return None
        if not _is_cmp(_defining(lt, O.CmpI), O.CmpI, (CmpIPredicate.SLT,), ai, bi):
            return None
        matched += [orr, both, tie_eq, lt.op]
    if not _is_cmp(cmp, O.CmpF, ARG_COMPARES, av, bv):
        return None
    matched.append(cmp)
    if len(block.ops) != len(matched) or any(o not in matched for o in block.ops):
        return None  # anything else in the region: not the standard combine
    return cmp, tie_eq


def _redirect(old: Op, new: Value) -> None:
    """Every use of `old`'s result that existed before `new` was built now reads `new`."""
    for user, i in [u for u in old.result.uses if u[0] is not new.op]:
        user.set_operand(i, new)


def _after(op: Op) -> Builder:
    block = op.parent
    return Builder(block.ops[block.ops.index(op) + 1])


def nan_ignoring(op: O.Reduce, cmp: Op, tie_eq: Op | None) -> None:
    """Rewrite the combine region of `op` so that a NaN value loses to a number (and ties another NaN)."""
    block = op.combine
    av, _, bv, _ = block.args
    top = Builder(block.ops[0])
    isnan = lambda v: top.make(O.CmpF, [v, v], i1, predicate=EnumAttr(CmpFPredicate.UNO))
    nan_b = isnan(bv)
    num_a = top.make(O.CmpF, [av, av], i1, predicate=EnumAttr(CmpFPredicate.ORD))
    bld = _after(cmp)
    _redirect(cmp, bld.make(O.OrI, [cmp.result, bld.make(O.AndI, [num_a, nan_b], i1)], i1))
    if tie_eq is not None:
        nan_a = isnan(av)
        bld = _after(tie_eq)
        _redirect(tie_eq, bld.make(O.OrI, [tie_eq.result, bld.make(O.AndI, [nan_a, nan_b], i1)], i1))


@ir_pass("nan-ignoring-arg-reduce")
class NanIgnoringArgReduce:
    """Makes the standard argmax/argmin combine skip NaN (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.Reduce) and (found := arg_combine(op)) is not None:
                nan_ignoring(op, *found)


__all__ = ["NanIgnoringArgReduce", "arg_combine", "nan_ignoring"]
