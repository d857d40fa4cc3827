"""Reductions and scans across the work-group, through local memory and barriers (shared C-like rules).

A full reduction of a tile with at least L elements first combines each work-item's own elements in registers,
then combines the L partial results: by warp shuffles where the device has them (warp_reduce.py), else in local
memory (S ~ sqrt L chains, two barriers). Any other reduction writes the tile
to local memory and tree-reduces along the axis: step s combines element k with k+s for every k < s of every output,
the work spread over the group. Scans are Hillis-Steele over double-buffered local memory (log2 K steps); Triton's
combine functions are associative, and reduction combiners are also taken as commutative, as on Triton's GPUs.
"""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.analysis.tile_model import reduction_plan
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op

from . import ctypes as CT
from .context import MAX_UNROLL, Idx, RenderContext, ScratchArray, Tile, check_pow2, log2, numel, strides
from .row_walk import folds_in_vectors, walk_rows
from .rules import CSTYLE_RULES as RULES
from .warp_reduce import warp_combine_partials


def combine(ctx: RenderContext, op: Op, lhs: list[str], rhs: list[str], targets: list[str]) -> None:
    """Emit `targets = combine(lhs, rhs)` with the op's combine region inlined in its own C scope."""
    ctx.emit("{")
    with ctx.indent():
        out = ctx.render_region(op.regions[0].entry, lhs + rhs)
        for t, v in zip(targets, out):
            ctx.emit(f"{t} = {v};")
    ctx.emit("}")


def _group_loop(ctx: RenderContext, tasks: int, var: str) -> tuple[str, str]:
    """Open a loop that spreads `tasks` task ids over the group; returns (open line, close line)."""
    if tasks <= ctx.L:
        cond = "" if tasks == ctx.L else f"if (lid < {tasks}u) "
        return f"{cond}{{ const uint {var} = lid;", "}"
    return f"for (uint {var} = lid; {var} < {tasks}u; {var} += {ctx.L}u) {{", "}"


def _results(
    ctx: RenderContext, op: Op, arrays: list[ScratchArray], ctypes: list[str], pos_of: Callable[[Idx], str]
) -> None:
    """Read the results from local memory: `pos_of(idx)` is where output element `idx` is."""
    for res, arr, ct in zip(op.results, arrays, ctypes):
        if not res.type.is_tensor:
            name = ctx.name_for(res)
            ctx.emit(f"{ct} {name} = {arr[pos_of(Idx((), lin='0u'))]};")
            ctx.values[res] = name
            continue
        out = ctx.declare_tile(res.type.shape, ct, ctx.name_for(res, "t"))
        ctx.tile_loop(out.shape, lambda idx, out=out, arr=arr: ctx.emit(f"{out.reg}[{idx.slot}] = {arr[pos_of(idx)]};"))
        ctx.values[res] = out


@RULES.register(O.Reduce)
def render_reduce(ctx: RenderContext, op: O.Reduce) -> None:
    if op in ctx.fused_results:  # computed where its operand was stored (row_walk.py)
        for res, x in zip(op.results, ctx.fused_results.pop(op)):
            ctx.values[res] = x
        return
    shape = op.srcs[0].type.shape
    check_pow2(shape, ctx.backend, op.loc)
    srcs = [ctx.get(v) for v in op.operands]
    ctypes = [ctx.ctype(v) for v in op.operands]
    base = ctx.scratch_top
    if _reduce_rows_alone(ctx, op, shape, srcs, ctypes):
        pass
    elif numel(shape) >= ctx.L and numel(shape) // shape[op.axis] == 1:
        _reduce_all(ctx, op, shape, srcs, ctypes)
    else:
        _reduce_axis(ctx, op, shape, srcs, ctypes)
    ctx.scratch_top = base


def _reduce_all(ctx: RenderContext, op: O.Reduce, shape: tuple[int, ...], srcs: list, ctypes: list[str]) -> None:
    L = ctx.L
    accs = [ctx.fresh("acc") for _ in srcs]
    for a, ct in zip(accs, ctypes):
        ctx.emit(f"{ct} {a};")
    reps = numel(shape) // L
    plan = reduction_plan(ctx.vector_bits, max(8 * CT.size_of(ct) for ct in ctypes), reps, max_acc=2)
    if reps > MAX_UNROLL and plan is not None:
        _lane_partials(ctx, op, shape, srcs, ctypes, accs, plan[0] * plan[1])
    else:

        def body(idx: Idx) -> None:
            xs = [ctx.fresh("x") for _ in srcs]
            for x, s, ct in zip(xs, srcs, ctypes):
                ctx.emit(f"{ct} {x} = {ctx.element(s, idx)};")
            if reps == 1:
                for a, x in zip(accs, xs):
                    ctx.emit(f"{a} = {x};")
                return
            ctx.emit(f"if ({idx.slot} == 0u) {{ " + " ".join(f"{a} = {x};" for a, x in zip(accs, xs)) + " } else")
            combine(ctx, op, accs, xs, accs)

        ctx.tile_loop(shape, body)
    if L > 1 and not warp_combine_partials(ctx, op, ctypes, accs):
        _combine_partials(ctx, op, srcs, ctypes, accs)
    for res, a, ct in zip(op.results, accs, ctypes):
        if res.type.is_tensor:
            out = ctx.declare_tile(res.type.shape, ct, ctx.name_for(res, "t"))
            ctx.tile_loop(out.shape, lambda idx, out=out, a=a: ctx.emit(f"{out.reg}[{idx.slot}] = {a};"))
            ctx.values[res] = out
        else:
            ctx.values[res] = a


def _lane_partials(
    ctx: RenderContext,
    op: O.Reduce,
    shape: tuple[int, ...],
    srcs: list,
    ctypes: list[str],
    accs: list[str],
    lanes_n: int,
) -> None:
    """A work-item's many elements combined in `lanes_n` independent chains, then the lanes in order. The lanes
    are the shared tile model's reduction plan for the device's vector width (V lanes x A accumulators, as cpu_ref
    folds a row) with A at most 2: they are a scalar array the device compiler vectorizes, where 4 vectors of
    partials measured slower (`reduction_plan`)."""
    lanes = [ctx.fresh("lane") for _ in srcs]
    for ln, ct in zip(lanes, ctypes):
        ctx.emit(f"{ct} {ln}[{lanes_n}];")
    for first in (True, False):  # the first chunk initializes the lanes (no branch in the vectorized loop)
        q, j = ctx.fresh("q"), ctx.fresh("j")
        cur = [f"{ln}[{j}]" for ln in lanes]

        def body(idx: Idx, first: bool = first, cur: list[str] = cur) -> None:
            xs = [ctx.fresh("x") for _ in srcs]
            for x, s, ct in zip(xs, srcs, ctypes):
                ctx.emit(f"{ct} {x} = {ctx.element(s, idx)};")
            if first:
                ctx.emit(" ".join(f"{c} = {x};" for c, x in zip(cur, xs)))
            else:
                combine(ctx, op, cur, xs, cur)

        ctx.tile_loop(shape, body, lanes=(lanes_n, q, j, first))
    for a, ln in zip(accs, lanes):
        ctx.emit(f"{a} = {ln}[0];")
    k = ctx.fresh("k")
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {k} = 1u; {k} < {lanes_n}u; ++{k})")
    combine(ctx, op, accs, [f"{ln}[{k}]" for ln in lanes], accs)


def _reduce_rows_alone(ctx: RenderContext, op: O.Reduce, shape: tuple[int, ...], srcs: list, ctypes: list[str]) -> bool:
    """A last-axis reduction of several rows on a one-work-item program (a CPU device): each row folded in lane
    partials (row_walk.py), as a full reduction folds a work-item's elements, instead of the general case's tree
    over local memory (log2 K passes over the whole tile, a copy first). One row too where its partials are
    vectors (a full reduction's scalar lane array stayed on PoCL's stack). False when it does not apply."""
    if ctx.L != 1 or op.axis != len(shape) - 1:
        return False
    if numel(shape) == shape[-1] and not folds_in_vectors(ctx, op, shape[-1], ctypes):
        return False
    values = [lambda idx, s=s: ctx.element(s, idx) for s in srcs]
    (results,) = walk_rows(ctx, shape, ctypes, values, None, [op])
    for res, out in zip(op.results, results):
        ctx.values[res] = out
    return True


def _combine_partials(ctx: RenderContext, op: O.Reduce, srcs: list, ctypes: list[str], accs: list[str]) -> None:
    """Combine the L work-items' partial results so that every work-item holds the total, with two barriers:
    S work-items each combine L/S partials (S ~ sqrt L), then every work-item combines those S values."""
    L = ctx.L
    arrays = [ctx.local_array(ct, ctx.alloc(L * CT.size_of(ct))) for ct in ctypes]
    ctx.barrier()
    for arr, a in zip(arrays, accs):
        ctx.emit(f"{arr['lid']} = {a};")
    ctx.barrier()
    S = L
    if L > 16:
        S = 1 << ((log2(L) + 1) // 2)
        firsts = [ctx.local_array(ct, ctx.alloc(S * CT.size_of(ct))) for ct in ctypes]
        ctx.emit(f"if (lid < {S}u) {{")
        with ctx.indent():
            for arr, a in zip(arrays, accs):
                ctx.emit(f"{a} = {arr['lid']};")
            k = ctx.fresh("k")
            ctx.emit(ctx.lang.unroll_pragma)
            ctx.emit(f"for (uint {k} = 1u; {k} < {L // S}u; ++{k})")
            combine(ctx, op, accs, [f"{arr[f'lid + {k} * {S}u']}" for arr in arrays], accs)
            for arr, a in zip(firsts, accs):
                ctx.emit(f"{arr['lid']} = {a};")
        ctx.emit("}")
        ctx.barrier()
        arrays = firsts
    for arr, a in zip(arrays, accs):
        ctx.emit(f"{a} = {arr['0']};")
    k = ctx.fresh("k")
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {k} = 1u; {k} < {S}u; ++{k})")
    combine(ctx, op, accs, [arr[k] for arr in arrays], accs)


def _reduce_axis(ctx: RenderContext, op: O.Reduce, shape: tuple[int, ...], srcs: list, ctypes: list[str]) -> None:
    n, axis = numel(shape), op.axis
    K, st = shape[axis], strides(shape)[axis]
    offsets = [ctx.alloc(n * CT.size_of(ct)) for ct in ctypes]
    arrays = [ctx.local_array(ct, off) for ct, off in zip(ctypes, offsets)]
    ctx.barrier()
    for s, ct, off in zip(srcs, ctypes, offsets):
        ctx.write_scratch(s, shape, ct, off)
    s = K // 2
    while s >= 1:
        ctx.barrier()
        t = ctx.fresh("t")
        open_, close = _group_loop(ctx, (n // K) * s, t)
        ctx.emit(open_)
        with ctx.indent():
            o, k = f"({t} >> {log2(s)})", f"({t} & {s - 1}u)"
            hi, lo = f"({o} >> {log2(st)})", f"({o} & {st - 1}u)"
            pos = ctx.fresh("pos")
            ctx.emit(f"const uint {pos} = ({hi} << {log2(K * st)}) + ({k} << {log2(st)}) + {lo};")
            lhs, rhs = [ctx.fresh("a") for _ in srcs], [ctx.fresh("b") for _ in srcs]
            for arr, a, b, ct in zip(arrays, lhs, rhs, ctypes):
                ctx.emit(f"{ct} {a} = {arr[pos]}, {b} = {arr[f'{pos} + {s * st}u']};")
            combine(ctx, op, lhs, rhs, [arr[pos] for arr in arrays])
        ctx.emit(close)
        s //= 2
    ctx.barrier()

    def pos_of(idx: Idx) -> str:
        o = idx.lin
        return f"((({o}) >> {log2(st)}) << {log2(K * st)}) + (({o}) & {st - 1}u)"

    _results(ctx, op, arrays, ctypes, pos_of)


@RULES.register(O.Scan)
def render_scan(ctx: RenderContext, op: O.Scan) -> None:
    if op in ctx.fused_results:  # computed where its operand was stored (row_walk.py)
        for res, x in zip(op.results, ctx.fused_results.pop(op)):
            ctx.values[res] = x
        return
    shape = op.srcs[0].type.shape
    check_pow2(shape, ctx.backend, op.loc)
    srcs = [ctx.get(v) for v in op.operands]
    ctypes = [ctx.ctype(v) for v in op.operands]
    n, axis = numel(shape), op.axis
    K, st = shape[axis], strides(shape)[axis]
    base = ctx.scratch_top
    bufs = [[ctx.alloc(n * CT.size_of(ct)) for ct in ctypes] for _ in range(2)]
    arrays = [[ctx.local_array(ct, off) for ct, off in zip(ctypes, offs)] for offs in bufs]
    ctx.barrier()
    for s, ct, off in zip(srcs, ctypes, bufs[0]):
        ctx.write_scratch(s, shape, ct, off)
    cur, s = 0, 1
    while s < K:
        src, dst = arrays[cur], arrays[1 - cur]
        ctx.barrier()
        t = ctx.fresh("t")
        open_, close = _group_loop(ctx, n, t)
        ctx.emit(open_)
        with ctx.indent():
            k = f"(({t} >> {log2(st)}) & {K - 1}u)"
            if op.reverse:
                cond, other = f"{k} + {s}u < {K}u", f"{t} + {s * st}u"
            else:
                cond, other = f"{k} >= {s}u", f"{t} - {s * st}u"
            ctx.emit(f"if ({cond}) {{")
            with ctx.indent():
                lhs, rhs = [ctx.fresh("a") for _ in srcs], [ctx.fresh("b") for _ in srcs]
                for arr, a, b, ct in zip(src, lhs, rhs, ctypes):
                    ctx.emit(f"{ct} {a} = {arr[other]}, {b} = {arr[t]};")
                combine(ctx, op, lhs, rhs, [arr[t] for arr in dst])
            ctx.emit("} else {")
            for a_src, a_dst in zip(src, dst):
                ctx.emit(f"  {a_dst[t]} = {a_src[t]};")
            ctx.emit("}")
        ctx.emit(close)
        cur, s = 1 - cur, s * 2
    ctx.barrier()
    _results(ctx, op, arrays[cur], ctypes, lambda idx: idx.lin)
    ctx.scratch_top = base


__all__ = ["Tile", "combine"]
