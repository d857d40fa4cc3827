"""Control flow and calls (shared C-like): scf.for/if/while become C loops and branches over the work-group (their
conditions are uniform scalars), loop-carried tensors live in register arrays; a function body of several blocks
(cf.br/cf.cond_br, e.g. an early `return`) becomes labelled blocks joined by `goto`, block arguments being variables
assigned before each jump; `tt.call` inlines the callee (OpenCL C 1.2 functions cannot declare local memory, which
tensor code in a callee may need)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Block, Op, Region, Value

from . import ctypes as CT
from .context import RenderContext, Tile
from .dot_blocked import blocked_accumulators, declare_blocked, double_buffered
from .rules import CSTYLE_RULES as RULES


def declare_like(ctx: RenderContext, v: Value, init: Any | None = None) -> Any:
    """A variable (scalar) or register array (tensor) for `v`, optionally initialised from a rendered value."""
    ct = ctx.ctype(v)
    if v.type.is_tensor:
        name = ctx.name_for(v, "t")
        if init is None:
            return ctx.declare_tile(v.type.shape, ct, name)
        return ctx.materialize(init, name, v.type.shape, ct)
    name = ctx.name_for(v)
    ctx.emit(f"{ct} {name}{'' if init is None else f' = {init}'};")
    return name


def assign_all(ctx: RenderContext, values: list[Value], targets: list[Any], carried: list[Value] | None = None) -> None:
    """targets = values, as a parallel assignment: a value that may still read a target (a generator, or a target
    itself) is first copied to a temporary; values already stored elsewhere are copied straight in, last.

    `carried` (a loop's body arguments, bound to the targets): a value computed elementwise from its own carried
    value and uniform operands (`a_ptrs + BK * stride`) is updated in place, first, while every target still holds
    its old value: no temporary tile and no copy back per iteration."""
    target_ids = {id(t) for t in targets} | {t for t in targets if isinstance(t, str)}
    moves: list[tuple[Any, Any]] = []
    in_place: list[tuple[Any, Tile]] = []
    for i, (v, dst) in enumerate(zip(values, targets)):
        x = ctx.get(v)
        if x is dst or (isinstance(x, str) and x == dst) or _same_array(x, dst):
            continue
        if carried is not None and isinstance(x, Tile) and x.reg is None and _elementwise_of(v, carried[i]):
            in_place.append((x, dst))
            continue
        reads_targets = (
            (isinstance(x, Tile) and x.reg is None) or id(x) in target_ids or (isinstance(x, str) and x in target_ids)
        )
        moves.append((declare_like(ctx, v, x) if reads_targets else x, dst))
    for x, dst in in_place:
        ctx.assign_tile(dst, x)
    for src, dst in moves:
        if isinstance(dst, Tile):
            reps = max(1, dst.numel // ctx.L)
            q = ctx.fresh("q")
            ctx.emit(f"for (uint {q} = 0u; {q} < {reps}u; ++{q}) {dst.reg}[{q}] = {src.reg}[{q}];")
        else:
            ctx.emit(f"{dst} = {src};")


def _same_array(x: Any, dst: Any) -> bool:
    """`x` is register array `dst` under another Tile (a dot that accumulated in place)."""
    return (
        isinstance(x, Tile)
        and isinstance(dst, Tile)
        and x.reg is not None
        and x.reg == dst.reg
        and x.shape == dst.shape
        and x.layout is dst.layout
    )


def _elementwise_of(v: Value, arg: Value, depth: int = 6) -> bool:
    """Element e of `v` reads `arg` only at element e: an elementwise chain over `arg`, scalars, splats of
    scalars and splat constants."""
    if v is arg:
        return True
    op = v.owner
    if depth == 0 or not isinstance(op, Op) or not op.elementwise or len(op.results) != 1:
        return False
    if v.type.is_tensor and arg.type.is_tensor and v.type.shape != arg.type.shape:
        return False
    return all(_uniform_operand(x) or _elementwise_of(x, arg, depth - 1) for x in op.operands)


def _uniform_operand(x: Value) -> bool:
    if not x.type.is_tensor:
        return True
    op = x.owner
    if isinstance(op, O.Splat):
        return not op.operands[0].type.is_tensor
    return isinstance(op, O.Constant) and getattr(op.value, "is_splat", False)


@RULES.register(O.For)
def render_for(ctx: RenderContext, op: O.For) -> None:
    lb, ub, step = (ctx.scalar(v) for v in (op.lower, op.upper, op.step))
    blocked = blocked_accumulators(ctx, op)
    carried = [
        declare_blocked(ctx, res, blocked[i], ctx.get(init)) if i in blocked else declare_like(ctx, res, ctx.get(init))
        for i, (res, init) in enumerate(zip(op.results, op.inits))
    ]
    for res, arg, c in zip(op.results, op.body.args[1:], carried):
        ctx.values[res] = c
        ctx.values[arg] = c
    iv_v = op.body.args[0]
    iv = ctx.name_for(iv_v, "iv")
    ct = ctx.ctype(iv_v)
    ctx.values[iv_v] = iv
    u = CT.uctype(iv_v.type)
    cond = f"({u}){iv} < ({u}){ub}" if op.unsigned_cmp else f"{iv} < {ub}"
    with double_buffered(ctx, op, blocked):
        ctx.emit(f"for ({ct} {iv} = {lb}; {cond}; {iv} += {step}) {{")
        with ctx.indent():
            term = ctx.render_block(op.body)
            if term is not None:
                assign_all(ctx, term.operands, carried, op.body.args[1:])
        ctx.emit("}")
    for i in blocked:  # back to the canonical layout for whatever reads the loop's result
        ctx.values[op.results[i]] = ctx.materialize(carried[i], ctx.name_for(op.results[i], "t"))


@RULES.register(O.If)
def render_if(ctx: RenderContext, op: O.If) -> None:
    targets = [declare_like(ctx, r) for r in op.results]
    ctx.emit(f"if ({ctx.scalar(op.condition)}) {{")
    with ctx.indent():
        term = ctx.render_block(op.then_block)
        if term is not None and targets:
            assign_all(ctx, term.operands, targets)
    if op.else_block is not None:
        ctx.emit("} else {")
        with ctx.indent():
            term = ctx.render_block(op.else_block)
            if term is not None and targets:
                assign_all(ctx, term.operands, targets)
    ctx.emit("}")
    for r, t in zip(op.results, targets):
        ctx.values[r] = t


@RULES.register(O.While)
def render_while(ctx: RenderContext, op: O.While) -> None:
    before, after = op.before, op.after
    state = [declare_like(ctx, arg, ctx.get(init)) for arg, init in zip(before.args, op.operands)]
    results = [declare_like(ctx, r) for r in op.results]
    for arg, s in zip(before.args, state):
        ctx.values[arg] = s
    ctx.emit("while (1) {")
    with ctx.indent():
        cond_op = ctx.render_block(before)
        assert isinstance(cond_op, O.Condition)
        cond = ctx.scalar(cond_op.condition)
        assign_all(ctx, cond_op.args, results)
        ctx.emit(f"if (!({cond})) break;")
        for arg, r in zip(after.args, results):
            ctx.values[arg] = r
        term = ctx.render_block(after)
        if term is not None:
            assign_all(ctx, term.operands, state)
    ctx.emit("}")
    for r, t in zip(op.results, results):
        ctx.values[r] = t


@RULES.register(O.Call)
def render_call(ctx: RenderContext, op: O.Call) -> None:
    callee = ctx.functions.get(op.callee)
    if callee is None:
        raise ctx.unsupported(f"call to unknown function @{op.callee}", op)
    if op.callee in ctx.call_stack:
        raise ctx.unsupported(f"recursive call to @{op.callee}", op)
    targets = [declare_like(ctx, r) for r in op.results]
    end = ctx.fresh("ret")
    multi = len(callee.regions[0].blocks) > 1

    def on_return(ret: Op) -> None:
        if targets:
            assign_all(ctx, ret.operands, targets)
        if multi:
            ctx.emit(f"goto {end};")

    ctx.emit(f"{{ /* inlined @{op.callee} */")
    with ctx.indent():
        for arg, v in zip(callee.args, op.operands):
            ctx.values[arg] = ctx.get(v)
        ctx.call_stack.append(op.callee)
        render_body(ctx, callee.regions[0], on_return)
        ctx.call_stack.pop()
    ctx.emit("}")
    if multi:
        ctx.emit(f"{end}: ;")
    for r, t in zip(op.results, targets):
        ctx.values[r] = t


def render_body(ctx: RenderContext, region: Region, on_return: Callable[[Op], None]) -> None:
    """Render a function body; `on_return(op)` handles each `tt.return` (the last one too)."""
    blocks = region.blocks
    if len(blocks) == 1:
        term = ctx.render_block(blocks[0])
        if isinstance(term, O.Return):
            on_return(term)
        elif term is not None:
            raise ctx.unsupported(f"function body ending in {term.op_name}", term)
        return
    for b in blocks:
        ctx.labels[b] = ctx.fresh("bb")
        if b is not blocks[0]:
            ctx.block_vars[b] = [declare_like(ctx, a) for a in b.args]
            for a, var in zip(b.args, ctx.block_vars[b]):
                ctx.values[a] = var
    for b in blocks:
        if b is not blocks[0]:
            ctx.emit(f"{ctx.labels[b]}: ;")
        term = ctx.render_block(b)
        if isinstance(term, (O.Br, O.CondBr)):
            ctx.render_op(term)
        elif isinstance(term, O.Return):
            on_return(term)
        else:
            raise ctx.unsupported(f"block ending in {term.op_name if term else 'no terminator'}", term)


def _jump(ctx: RenderContext, dest: Block, values: list[Value]) -> None:
    assign_all(ctx, values, ctx.block_vars.get(dest, []))
    ctx.emit(f"goto {ctx.labels[dest]};")


@RULES.register(O.Br)
def render_br(ctx: RenderContext, op: O.Br) -> None:
    _jump(ctx, op.dest, op.args)


@RULES.register(O.CondBr)
def render_cond_br(ctx: RenderContext, op: O.CondBr) -> None:
    ctx.emit(f"if ({ctx.scalar(op.condition)}) {{")
    with ctx.indent():
        _jump(ctx, op.true_dest, op.true_args)
    ctx.emit("} else {")
    with ctx.indent():
        _jump(ctx, op.false_dest, op.false_args)
    ctx.emit("}")


@RULES.register(O.Barrier)
def render_barrier(ctx: RenderContext, op: O.Barrier) -> None:
    """`tl.debug_barrier()`: the work-group barrier, ordering global as well as local memory; with a device-scope
    fence first where the device has one, so stores before it are seen by other work-groups that take a lock the
    group releases after it (upstream test_atomic_cas's relaxed lock)."""
    fence = ctx.lang.device_fence(ctx.features)
    if fence:
        ctx.emit(fence)
    ctx.emit(ctx.lang.full_barrier)


@RULES.register(O.Assume)
def render_assume(ctx: RenderContext, op: O.Assume) -> None:
    """`tl.assume(cond)`: an optimisation hint; OpenCL C 1.2 has no way to state it, so nothing is emitted."""
