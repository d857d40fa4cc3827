"""Loads of a loop's dot operands issued one iteration ahead (software pipelining, as Triton's own pipeliner does for
GPUs).

Tutorial 03's k loop loads A and B tiles and multiplies them at once: on a GPU the loads' latency is exposed every
step, with nothing to overlap it but other programs. This pass loads the first tiles before the loop and, in each
iteration, the next iteration's tiles before the dot that consumes the current ones, which the loop carries:

    x0 = load(p(lb, c0), m(lb, c0) & lb < ub)
    for iv ... iter_args(c = c0, x = x0):
        xn = load(p(iv + s, c'), m(iv + s, c') & iv + s < ub)     # c' = the yield's values, computed early
        acc = dot(x, ...)
        yield ..., xn

A load qualifies when it sits in the loop's body, is not volatile, and only dots in that body read it (as a or b);
its address, mask and other value, and the carried values they use next time, come from pure ops of the body on the
induction variable, carried values and values defined above. The body may not store, run atomics or call (a store
could change what the early load reads). The extra mask term keeps the last iteration's early load inside what the
kernel may touch (a masked lane reads nothing).

Worth it where loads are asynchronous and latency is hidden by other work (GPUs); a backend opts in per target. An
out-of-order CPU gains nothing and carries the tiles in registers, so cpu_ref does not run it.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.clone import clone_op
from ..ir.core import BlockArgument, Module, Op, OpResult, Value
from ..ir.enums import CmpIPredicate, EnumAttr
from ..ir.types import TensorType, i1
from ..pipeline import IRPass, PassContext


class PrefetchDotOperands(IRPass):
    name = "prefetch-dot-operands"

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.For) and _body_is_free_of_writes(op):
                _Pipeliner(op).run()


def _body_is_free_of_writes(loop: O.For) -> bool:
    for op in loop.body.ops:
        for inner in op.walk():
            if inner.pure or inner.terminator:
                continue
            if isinstance(inner, O.Load) and not inner.is_volatile:
                continue
            if isinstance(inner, (O.For, O.If)):
                continue  # their bodies are walked
            return False
    return True


def _feeds_dots_only(op: Op, loop: O.For) -> bool:
    if not isinstance(op, O.Load) or op.is_volatile or not isinstance(op.result.type, TensorType):
        return False
    uses = op.result.uses
    return bool(uses) and all(isinstance(u, O.Dot) and i in (0, 1) and u.parent is loop.body for u, i in uses)


def _slice(values: list[Value], loop: O.For) -> list[Op] | None:
    """The pure ops of the loop body that compute `values` (in body order), or None where one is not pure, has
    regions or is defined in a nested region."""
    body = loop.body
    found: set[Op] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, BlockArgument):
            if v.block is body or not _inside(v.block.parent.parent if v.block.parent else None, loop):
                continue  # the induction variable, a carried value, or an argument of a block above the loop
            return None
        op = v.owner
        if not _inside(op, loop):
            continue  # defined above the loop
        if op.parent is not body or not op.pure or op.regions:
            return None
        if op not in found:
            found.add(op)
            stack.extend(op.operands)
    return [op for op in body.ops if op in found]


def _inside(op: Op | None, loop: O.For) -> bool:
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


class _Pipeliner:
    """Rewrites the qualifying loads of one loop; the next induction value and both bound checks are built once."""

    def __init__(self, loop: O.For) -> None:
        self.loop = loop
        self.next_live: tuple[Value, Value] | None = None
        self.first_live: Value | None = None

    def run(self) -> None:
        for load in [x for x in self.loop.body.ops if _feeds_dots_only(x, self.loop)]:
            self.pipeline(load)

    def pipeline(self, load: O.Load) -> bool:
        loop = self.loop
        body = loop.body
        iv, carried = body.args[0], body.args[1:]
        yield_op = body.ops[-1]
        operands = list(load.operands)
        addr = _slice(operands, loop)
        if addr is None:
            return False
        used = {a for op in addr for a in op.operands if a in carried} | {a for a in operands if a in carried}
        nexts = {a: yield_op.operands[a.index - 1] for a in used}
        step = _slice(list(nexts.values()), loop)
        if step is None:
            return False
        # the carried values' next ones, computed before the load (pure ops, moved up in order)
        at = body.ops.index(load)
        for op in step:
            if body.ops.index(op) > at:
                body.remove(op)
                body.insert(body.ops.index(load), op)
        if self.next_live is None:
            ivn = _insert(O.AddI([iv, loop.step], [iv.type]), load)
            self.next_live = (ivn, _insert(self._below_upper(ivn), load))
        ivn, live = self.next_live
        early = _load_copy(load, addr, {iv: ivn, **nexts}, live, load)
        # the first tiles, before the loop
        if self.first_live is None:
            self.first_live = _insert(self._below_upper(loop.lower), loop)
        first = {iv: loop.lower, **{a: loop.inits[a.index - 1] for a in used}}
        x0 = _load_copy(load, addr, first, self.first_live, loop)
        # carried from one iteration to the next
        _append_operand(loop, x0)
        loop.results.append(OpResult(x0.type, loop, len(loop.results)))
        arg = BlockArgument(x0.type, body, len(body.args), load.result.name)
        body.args.append(arg)
        _append_operand(yield_op, early)
        load.result.replace_all_uses_with(arg)
        load.erase()
        for op in reversed(addr):  # what computed this iteration's address, now unused
            if not any(r.uses for r in op.results):
                op.erase()
        return True

    def _below_upper(self, v: Value) -> Op:
        pred = CmpIPredicate.ULT if self.loop.unsigned_cmp else CmpIPredicate.SLT
        return O.CmpI([v, self.loop.upper], [i1], attrs={"predicate": EnumAttr(pred)})


def _load_copy(load: O.Load, addr: list[Op], values: dict[Value, Value], live: Value, before: Op) -> Value:
    """`load` with its address slice `addr` copied before `before` reading `values` (mapped leaves), masked off where
    the scalar `live` is false."""
    block = before.parent
    assert block is not None
    values = dict(values)
    for op in addr:
        block.insert(block.ops.index(before), clone_op(op, values))
    shape = load.result.type.shape
    mask = _insert(O.Splat([live], [TensorType(shape, i1)]), before)
    if load.mask is not None:
        mask = _insert(O.AndI([values.get(load.mask, load.mask), mask], [mask.type]), before)
    other = [] if load.other is None else [values.get(load.other, load.other)]
    new = O.Load([values.get(load.ptr, load.ptr), mask, *other], [load.result.type], attrs=dict(load.attrs))
    new.segment_sizes = (1, 1, len(other))
    return _insert(new, before)


def _append_operand(op: Op, v: Value) -> None:
    """`v` as `op`'s last operand, in its last (variadic) operand field."""
    op._add_operand(v)
    if op.segment_sizes is not None:
        op.segment_sizes = (*op.segment_sizes[:-1], op.segment_sizes[-1] + 1)


def _insert(op: Op, before: Op) -> Value:
    block = before.parent
    assert block is not None
    block.insert(block.ops.index(before), op)
    op.loc = before.loc
    return op.result
