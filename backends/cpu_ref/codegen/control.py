"""Structured control flow (scf.for / scf.if / scf.while), unstructured branches (cf.br / cf.cond_br, from early
returns), calls and returns.

A call is a real LLVM call taking and returning scalars: calls of functions that take or return tensors
(`@triton.jit(noinline=True)` helpers returning a block) were inlined by the shared `inline-tensor-calls` pass
(sdk/transforms/inline_calls.py) before lowering.

Values that cross region boundaries live in storage: loop-carried and if-result tensors in buffers, scalars in stack
slots (LLVM's mem2reg turns those into phis). A yield first evaluates every yielded value, then writes them, so a
yield that permutes carried values reads the old ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.attrs import OpaqueAttr
from triton_backend_sdk.ir.core import Block, Value

from .context import LoweringContext, Tile
from .debug import assert_state, branch_to_abort, launch_failed
from .rules import RULES
from .types import buffer_type, llvm_type


class Slot:
    """Storage for one value crossing a region boundary."""

    def __init__(self, ctx: LoweringContext, v: Value) -> None:
        self.ctx = ctx
        self.type = v.type
        if v.type.is_tensor:
            self.tile: Tile | None = ctx.new_buffer_tile(v.type.shape, llvm_type(v.type), "carry")
            self.ptr = None
        else:
            self.tile = None
            self.ety = llvm_type(v.type)
            self.ptr = ctx.alloca(self.ety, 1, "slot")

    def read(self) -> Any:
        if self.tile is not None:
            return self.tile
        v = self.ctx.b.load(
            self.ctx.b.gep(self.ptr, [ir.Constant(ir.IntType(64), 0)], source_etype=buffer_type(self.ety)),
            typ=buffer_type(self.ety),
        )
        return self.ctx.b.trunc(v, self.ety) if self.ety == ir.IntType(1) else v

    def write(self, x: Any) -> None:
        b = self.ctx.b
        if self.tile is not None:
            assert isinstance(x, Tile)
            if x.buf is not self.tile.buf:
                self.ctx.materialize(x, into=self.tile)
            return
        v = b.zext(x, buffer_type(self.ety)) if self.ety == ir.IntType(1) else x
        b.store(v, b.gep(self.ptr, [ir.Constant(ir.IntType(64), 0)], source_etype=buffer_type(self.ety)))


def write_all(ctx: LoweringContext, slots: Sequence[Slot], values: Sequence[Value]) -> None:
    """Evaluate every value before writing any slot: generators and buffers that alias a slot are staged.

    A value already in its own slot's buffer (a tile updated in place, e.g. a dot accumulating into its carried
    accumulator) needs neither staging nor a copy.
    """
    staged: list[Any] = []
    slot_bufs = {id(s.tile.buf) for s in slots if s.tile is not None}
    for s, v in zip(slots, values):
        x = ctx.get(v)
        in_place = isinstance(x, Tile) and s.tile is not None and x.buf is s.tile.buf
        if isinstance(x, Tile) and not in_place and (x.buf is None or id(x.buf) in slot_bufs):
            x = ctx.materialize(x)
        staged.append(x)
    for s, x in zip(slots, staged):
        s.write(x)


def lower_region_body(ctx: LoweringContext, block: Block, args: Sequence[Any]) -> O.Op:
    """Lower every op but the terminator, with the block's arguments bound to `args`; returns the terminator."""
    for a, v in zip(block.args, args):
        ctx.values[a] = v
    for op in block.ops[:-1]:
        ctx.lower_op(op)
    return block.ops[-1]


_LICM_DISABLE = re.compile(r"licm=#llvm\.loop_licm<(?:[^>]*,)?disable=true")


def _licm_disabled(op: O.Op) -> bool:
    """`llvm.loop_annotation = #llvm.loop_annotation<licm = #llvm.loop_licm<disable = true, ...>>`: Triton's
    `disable_licm=True` on `tl.range` / `tl.condition` (kept as opaque text, its aliases expanded by the reader)."""
    a = op.attrs.get("llvm.loop_annotation")
    text = "".join(a.text.split()) if isinstance(a, OpaqueAttr) else ""
    return _LICM_DISABLE.search(text) is not None


def _mark_back_edge(ctx: LoweringContext, op: O.Op, branch: ir.Instruction) -> None:
    """Attach LLVM's loop ID to a loop's back edge where the op asks LLVM not to hoist invariants out of it:
    `!{self, !{"llvm.licm.disable"}}`, the metadata Triton's GPU path emits for the same annotation."""
    if not _licm_disabled(op):
        return
    module = ctx.b.module
    loop_id = module.add_metadata([module.add_metadata([ir.MetaDataString(module, "llvm.licm.disable")])])
    loop_id.operands = (loop_id, *loop_id.operands)
    branch.set_metadata("llvm.loop", loop_id)


@RULES.register(O.For)
def lower_for(ctx: LoweringContext, op: O.For) -> None:
    b = ctx.b
    lb, ub, step = ctx.scalar(op.lower), ctx.scalar(op.upper), ctx.scalar(op.step)
    slots = [Slot(ctx, r) for r in op.results]
    write_all(ctx, slots, op.inits)
    lt = b.icmp_unsigned if op.unsigned_cmp else b.icmp_signed
    pre = b.block
    header = b.append_basic_block("for")
    exit_ = b.append_basic_block("for.end")
    b.cbranch(lt("<", lb, ub), header, exit_)
    b.position_at_end(header)
    iv = b.phi(lb.type, name="iv")
    iv.add_incoming(lb, pre)
    term = lower_region_body(ctx, op.body, [iv, *[s.read() for s in slots]])
    write_all(ctx, slots, term.operands)
    b = ctx.b
    nxt = b.add(iv, step)
    iv.add_incoming(nxt, b.block)
    _mark_back_edge(ctx, op, b.cbranch(lt("<", nxt, ub), header, exit_))
    b.position_at_end(exit_)
    for r, s in zip(op.results, slots):
        ctx.values[r] = s.read()


@RULES.register(O.If)
def lower_if(ctx: LoweringContext, op: O.If) -> None:
    b = ctx.b
    slots = [Slot(ctx, r) for r in op.results]
    cond = ctx.scalar(op.condition)
    then = b.append_basic_block("then")
    other = b.append_basic_block("else")
    done = b.append_basic_block("endif")
    b.cbranch(cond, then, other)
    for block, bb in ((op.then_block, then), (op.else_block, other)):
        ctx.b.position_at_end(bb)
        if block is not None:
            term = lower_region_body(ctx, block, [])
            write_all(ctx, slots, term.operands)
        elif slots:
            raise UnsupportedError("cpu_ref", "scf.if with results but no else region", op.loc)
        ctx.b.branch(done)
    ctx.b.position_at_end(done)
    for r, s in zip(op.results, slots):
        ctx.values[r] = s.read()


@RULES.register(O.While)
def lower_while(ctx: LoweringContext, op: O.While) -> None:
    before_slots = [Slot(ctx, a) for a in op.before.args]
    after_slots = [Slot(ctx, a) for a in op.after.args]
    write_all(ctx, before_slots, op.operands)
    header = ctx.b.append_basic_block("while")
    body = ctx.b.append_basic_block("while.body")
    exit_ = ctx.b.append_basic_block("while.end")
    ctx.b.branch(header)
    ctx.b.position_at_end(header)
    cond_op = lower_region_body(ctx, op.before, [s.read() for s in before_slots])
    assert isinstance(cond_op, O.Condition), f"scf.while before-region ends in {cond_op.op_name}"
    write_all(ctx, after_slots, cond_op.args)
    ctx.b.cbranch(ctx.scalar(cond_op.condition), body, exit_)
    ctx.b.position_at_end(body)
    term = lower_region_body(ctx, op.after, [s.read() for s in after_slots])
    write_all(ctx, before_slots, term.operands)
    _mark_back_edge(ctx, op, ctx.b.branch(header))
    ctx.b.position_at_end(exit_)
    for r, s in zip(op.results, after_slots):
        ctx.values[r] = s.read()


#: why a tile at a call boundary is refused: the `sdkir` stage's shared pass inlines those calls first
_SCALAR_CALLS = "cpu_ref calls pass scalars only; the shared pass inline-tensor-calls inlines calls that move tensors"


@RULES.register(O.Return)
def lower_return(ctx: LoweringContext, op: O.Return) -> None:
    if not op.operands:
        ctx.b.ret_void()
        return
    vals = [ctx.get(v) for v in op.operands]
    if any(isinstance(v, Tile) for v in vals):
        raise UnsupportedError("cpu_ref", f"returning a tensor from a function: {_SCALAR_CALLS}", op.loc)
    if len(vals) == 1:
        ctx.b.ret(vals[0])
        return
    agg = ir.Constant(ctx.fn.function_type.return_type, None)
    for i, v in enumerate(vals):
        agg = ctx.b.insert_value(agg, v, i)
    ctx.b.ret(agg)


@RULES.register(O.Call)
def lower_call(ctx: LoweringContext, op: O.Call) -> None:
    fn = ctx.functions.get(op.callee)
    if fn is None:
        raise UnsupportedError("cpu_ref", f"call to unknown function @{op.callee}", op.loc)
    args = [ctx.get(v) for v in op.operands]
    if any(isinstance(a, Tile) for a in args):
        raise UnsupportedError("cpu_ref", f"passing a tensor to function @{op.callee}: {_SCALAR_CALLS}", op.loc)
    if op.callee in ctx.may_fail:
        r = ctx.b.call(fn, [*args, *ctx.program_ids, *ctx.num_programs, assert_state(ctx)])
        branch_to_abort(ctx, launch_failed(ctx))
    else:
        r = ctx.b.call(fn, [*args, *ctx.program_ids, *ctx.num_programs])
    if len(op.results) == 1:
        ctx.define(op.result, r)
    else:
        for i, res in enumerate(op.results):
            ctx.define(res, ctx.b.extract_value(r, i))


def lower_blocks(ctx: LoweringContext, blocks: Sequence[Block]) -> None:
    """A function body of several blocks: one LLVM block each, block arguments in slots written by the branches."""
    for blk in blocks[1:]:
        ctx.block_targets[blk] = (ctx.fn.append_basic_block("bb"), [Slot(ctx, a) for a in blk.args])
    ctx.lower_block(blocks[0])
    for blk in blocks[1:]:
        bb, slots = ctx.block_targets[blk]
        ctx.b.position_at_end(bb)
        for a, s in zip(blk.args, slots):
            ctx.values[a] = s.read()
        ctx.lower_block(blk)


def _jump(ctx: LoweringContext, target: Block, values: Sequence[Value]) -> None:
    if target not in ctx.block_targets:
        raise UnsupportedError("cpu_ref", "a branch to a block outside the function body's top-level blocks")
    bb, slots = ctx.block_targets[target]
    write_all(ctx, slots, values)
    ctx.b.branch(bb)


@RULES.register(O.Br)
def lower_br(ctx: LoweringContext, op: O.Br) -> None:
    _jump(ctx, op.dest, op.args)


@RULES.register(O.CondBr)
def lower_cond_br(ctx: LoweringContext, op: O.CondBr) -> None:
    cond = ctx.scalar(op.condition)
    b = ctx.b
    on_true, on_false = b.append_basic_block("br.true"), b.append_basic_block("br.false")
    b.cbranch(cond, on_true, on_false)
    b.position_at_end(on_true)
    _jump(ctx, op.true_dest, op.true_args)
    ctx.b.position_at_end(on_false)
    _jump(ctx, op.false_dest, op.false_args)
