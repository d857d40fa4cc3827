"""`tt.atomic_poll` as a loop of atomic loads, for backends without a rule of their own.

    matched = false; start = clock()                      (clock only with a timeout)
    do { v = atomic_load(sem, scope, ptr); matched |= v == expected }
    while (any(!matched) && clock() - start < timeout)

Each load carries the poll's semantics: with `acquire`, the load that observes the expected value is an acquire
load, which is what an acquire poll promises (a relaxed loop plus one acquire fence would need a fence op the SDK IR
lacks, and is no stronger). An element that matched stays true; re-reading it changes nothing. The first round runs
before the clock is asked, so every element is read at least once even with a zero timeout; a timeout that is the
constant 0 is that one round alone, with no clock.

The clock is `device.clock_ns` (sdk/ir/dialects/device.py). A backend whose rule table has no rule for it (OpenCL C
1.2 has no clock) gets a poll with a run-time timeout refused by name at compile time: a poll that never times out
would hang where the kernel expects false.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.attrs import IntegerAttr
from ..ir.core import Block, Module, Op, Region, Value
from ..ir.dialects.device import ClockNs
from ..ir.enums import CmpIPredicate, EnumAttr
from ..ir.types import i32, i64
from ..lowering import REPRO_HINT
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace


def _is_const_zero(v: Value) -> bool:
    """`v` is the constant 0, possibly widened (Triton casts the timeout to uint64 with an `extsi`/`extui`)."""
    op = v.owner
    while isinstance(op, (O.ExtSI, O.ExtUI)):
        op = op.operands[0].owner
    if not isinstance(op, O.Constant):
        return False
    attr = op.attrs.get("value")
    return isinstance(attr, IntegerAttr) and attr.value == 0


def _insert(bld: Builder, op: Op) -> Op:
    bld.block.insert(bld.block.ops.index(bld.anchor), op)
    return op


def _builder_at_end(block: Block, loc: object) -> tuple[Builder, Op]:
    """A builder appending to `block`, anchored on a placeholder the caller erases after adding the terminator."""
    mark = O.Yield([], [], loc=loc)
    block.append(mark)
    return Builder(mark), mark


def _poll_once(bld: Builder, op: O.AtomicPoll, matched: Value | None) -> Value:
    """One atomic load of every element; the elements seen equal so far (`matched`) stay matched."""
    attrs = {"sem": EnumAttr(op.sem), "scope": EnumAttr(op.scope)}
    v = bld.op(O.AtomicLoad, [op.ptr], [op.expected.type], attrs).result
    eq = bld.cmpi(CmpIPredicate.EQ, v, op.expected)
    return eq if matched is None else bld.binary(O.OrI, matched, eq)


def _any_false(bld: Builder, matched: Value) -> Value:
    """Scalar i1: some element of `matched` is false."""
    pending = bld.binary(O.XOrI, matched, 1)
    if not matched.type.is_tensor:
        return pending
    if len(pending.type.shape) > 1:
        n = 1
        for d in pending.type.shape:
            n *= d
        pending = bld.reshape(pending, (n,))
    wide = bld.cast(O.ExtUI, pending, i32)
    combine = Block([i32, i32])
    cb, mark = _builder_at_end(combine, bld.loc)
    cb.op(O.ReduceReturn, [cb.binary(O.OrI, combine.args[0], combine.args[1])], [])
    mark.erase()
    red = O.Reduce([wide], [i32], attrs={"axis": IntegerAttr(0, i32)}, regions=[Region([combine])], loc=bld.loc)
    count = _insert(bld, red).result
    return bld.cmpi(CmpIPredicate.NE, count, 0)


def lower_atomic_poll(op: O.AtomicPoll, clock: bool, backend: str) -> None:
    bld = Builder(op)
    timeout = op.timeout
    if timeout is not None and _is_const_zero(timeout):
        replace(op, [_poll_once(bld, op, None)])
        return
    if timeout is not None and not clock:
        raise UnsupportedError(
            backend,
            "tt.atomic_poll with timeout_ns: the device has no clock to measure the timeout "
            "(poll without timeout_ns, or with the constant 0)",
            op.loc,
            REPRO_HINT.format(backend=backend),
        )
    res_t = op.result.type
    start = bld.make(ClockNs, [], i64) if timeout is not None else None
    init = bld.const(0, res_t)
    before, after = Block([res_t]), Block([res_t])
    loop = _insert(bld, O.While([init], [res_t], regions=[Region([before]), Region([after])], loc=op.loc))

    body, mark = _builder_at_end(before, op.loc)
    matched = _poll_once(body, op, before.args[0])
    more = _any_false(body, matched)
    if start is not None:
        elapsed = body.binary(O.SubI, body.make(ClockNs, [], i64), start)
        wait = timeout if timeout.type == i64 else body.cast(O.ExtUI, timeout, i64)
        more = body.binary(O.AndI, more, body.cmpi(CmpIPredicate.ULT, elapsed, wait))
    body.op(O.Condition, [more, matched], [])
    mark.erase()
    after.append(O.Yield([after.args[0]], [], loc=op.loc))
    replace(op, [loop.result])


@ir_pass("atomic-poll")
class AtomicPoll:
    """Expands `tt.atomic_poll` into an `scf.while` of `tt.atomic_load`s; `clock`: the backend renders
    `device.clock_ns` (else a run-time timeout is refused)."""

    clock: bool = True

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.AtomicPoll):
                lower_atomic_poll(op, self.clock, ctx.target.name)


__all__ = ["AtomicPoll", "lower_atomic_poll"]
