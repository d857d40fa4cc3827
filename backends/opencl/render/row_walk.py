"""One walk over the rows of a tile on a one-work-item program (a CPU device): its elements stored into a register
tile, folded into last-axis reductions in lane partials, or both at once.

A tile that is stored (a load's copy, or a costly generator used twice) and also reduced along its last axis would
otherwise be walked twice, a reduction of several rows would go through local memory, and softmax would walk each
row five times (copy, max, exp, sum, divide); here it walks it three times. Which reductions may be computed where
their operand is stored is the shared tile model's choice (`tile_model.fused_row_reductions`); the lanes are its
reduction plan (`reduction_plan`, at most 2 accumulators). Where the combine is one op the language spells on
vectors (`vector_combine.py`), the partials are vector variables updated a chunk of `p` elements at a time from the
stored row (or a small chunk array); else a scalar array the device compiler vectorizes but keeps in memory, every
chunk's partials going through a store and a reload (PoCL: a loop-carried chain through the stack).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from triton_backend_sdk.analysis.tile_model import CACHE_LINE, fused_row_reductions, reduction_plan
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Value

from . import ctypes as CT
from .context import TILE_ALIGNMENT, Idx, RenderContext, Tile, numel
from .vector_combine import VectorCombine, vector_combine, vector_width


def lanes_for(ctx: RenderContext, ctype: str, n: int) -> int:
    """The lane partials a row of `n` elements is folded in (1 when the row does not split into vectors)."""
    plan = reduction_plan(ctx.vector_bits, 8 * CT.size_of(ctype), n, max_acc=2)
    return plan[0] * plan[1] if plan is not None else 1


#: the most mask tests a chunk of the walk makes to read its elements without their mask (`WholeRuns`)
MAX_RUN_TESTS = 4


@dataclass(frozen=True)
class WholeRuns:
    """A walked load whose mask is proven the same over runs of `run` elements along the row (AxisInfo's
    constancy, e.g. `offs < n` with n divisible by 16): a chunk whose runs all test true reads `values` (no mask
    per element, no blend with `other`), any other chunk the masked values. PoCL built each masked element from
    64-bit index compares in softmax's first pass."""

    run: int
    test: Callable[[Idx], str]
    values: list[Callable[[Idx], str]]


def walk_rows(
    ctx: RenderContext,
    shape: tuple[int, ...],
    ctypes: list[str],
    values: list[Callable[[Idx], str]],
    out: Tile | None,
    reductions: list[O.Reduce],
    ahead: Callable[[Idx], str] | None = None,
    whole: WholeRuns | None = None,
) -> list[list[str | Tile]]:
    """Emit the walk over the elements `values[i](idx)` of a reduction's operands (one operand, or an argmin's
    value and index): the first stored into `out` (if given), all folded into each reduction along the last axis.
    Returns each reduction's results (C names for a 1-D tile, else register tiles of the row shape). One
    work-item only: the element at linear index e is register slot e. `ahead(idx)`, where given, is an address to
    prefetch for the element at idx (a load's pointer some way further along its row), one per cache line; `whole`,
    where given, lets chunks whose mask runs are all true read their elements unmasked."""
    assert ctx.L == 1
    n = shape[-1]
    rows = numel(shape) // n
    p = min(lanes_for(ctx, ct, n) for ct in ctypes)
    o, q, j, k = ctx.fresh("o"), ctx.fresh("q"), ctx.fresh("j"), ctx.fresh("k")
    lanes = [[ctx.fresh("lane") for _ in ctypes] for _ in reductions]
    row_shape = shape[:-1]
    if row_shape:
        results: list[list[str | Tile]] = [
            [ctx.declare_tile(row_shape, ct, ctx.name_for(res, "t")) for res, ct in zip(r.results, ctypes)]
            for r in reductions
        ]
    else:
        results = [[ctx.fresh("acc") for _ in ctypes] for _ in reductions]
        for names in results:
            for a, ct in zip(names, ctypes):
                ctx.emit(f"{ct} {a};")

    w, combines = _vector_plan(ctx, ctypes, p, reductions)
    chunk = ctx.fresh("chunk") if w and out is None else None
    vlanes = [[ctx.fresh("vlane") for _ in range(p // w)] for _ in reductions] if w else []

    def at(pos: str) -> Idx:
        """The element at position `pos` of row `o`, with its per-dimension indices: derived from the linear index
        (`lin >> 10`, `lin & 1023`), the device compiler saw no contiguous run in a row of a multi-row walk."""
        lin = f"({o} * {n}u + {pos})" if rows > 1 else f"({pos})"
        col = f"({pos})"
        return Idx(shape, lin=lin, dims=[*Idx(row_shape, lin=o).dims, col] if row_shape else [col], slot=lin)

    def element(pos: str, first: bool, vals: list[Callable[[Idx], str]]) -> None:
        idx = at(pos)
        lin = idx.lin
        xs = [ctx.fresh("x") for _ in ctypes]
        for x, ct, value in zip(xs, ctypes, vals):
            ctx.emit(f"{ct} {x} = {value(idx)};")
        if out is not None:
            ctx.emit(f"{out.reg}[{lin}] = {xs[0]};")
        if w:
            if chunk is not None:
                ctx.emit(f"{chunk}[{j}] = {xs[0]};")
            return
        for r, lns in zip(reductions, lanes):
            cur = [f"{ln}[{j}]" for ln in lns]
            if first:
                ctx.emit(" ".join(f"{c} = {x};" for c, x in zip(cur, xs)))
            else:
                _combine(ctx, r, cur, xs, cur)

    # runs start at multiples of `run`: a chunk (p elements from a multiple of p) holds whole runs, or lies in one
    step = min(whole.run, p) if whole is not None else 0
    if not step or p % step or (whole is not None and whole.run % step) or p // step > MAX_RUN_TESTS:
        step = 0

    def walk_chunk(start: str, first: bool) -> None:
        """The loop over the `p` elements from position `start` (unmasked where `whole` proves the chunk in)."""
        pos = f"{start} + {j}" if start != "0u" else j

        def loop(vals: list[Callable[[Idx], str]]) -> None:
            ctx.emit(f"for (uint {j} = 0u; {j} < {p}u; ++{j}) {{")
            with ctx.indent():
                element(pos, first, vals)
            ctx.emit("}")

        if not step:
            loop(values)
            return
        assert whole is not None
        tests = [whole.test(at(f"{start} + {e}u")) for e in range(0, p, step)]
        ctx.emit(f"if ({' && '.join(tests)}) {{")
        loop(whole.values)
        ctx.emit("} else {")
        loop(values)
        ctx.emit("}")

    def fold_chunk(start: str, first: bool) -> None:
        """The vector partials updated from the `p` elements just walked (`start`: the first one's position)."""
        base_of = f"{chunk}" if chunk is not None else f"{out.reg} + ({o} * {n}u + {start})"
        vtype = ctx.lang.vector_type(ctypes[0], w)
        xs = [ctx.fresh("vx") for _ in range(p // w)]
        for e, x in enumerate(xs):
            ctx.emit(f"const {vtype} {x} = {_vector_read(ctx, ctypes[0], w, f'{base_of} + {e * w}u')};")
        for vls, f in zip(vlanes, combines):
            for vl, x in zip(vls, xs):
                ctx.emit(f"{vl} = {x};" if first else f"{vl} = {f(ctx.lang, vl, x)};")

    with ctx.loop_body() as (inner, base), ctx.indent():
        if w:
            vtype = ctx.lang.vector_type(ctypes[0], w)
            for vls in vlanes:
                ctx.emit(" ".join(f"{vtype} {vl};" for vl in vls))
            if chunk is not None:
                ctx.emit(f"{ctypes[0]} {chunk}[{p}]{ctx.lang.array_alignment(TILE_ALIGNMENT)};")
        else:
            for lns in lanes:
                for ln, ct in zip(lns, ctypes):
                    ctx.emit(f"{ct} {ln}[{p}];")
        walk_chunk("0u", True)
        if w:
            fold_chunk("0u", True)
        if n > p:
            ctx.emit(f"for (uint {q} = 1u; {q} < {n // p}u; ++{q}) {{")
            if ahead is not None:
                line = max(1, CACHE_LINE // CT.size_of(ctypes[0]))
                for e in range(0, p, line):
                    ctx.emit(f"__builtin_prefetch({ahead(at(f'{q} * {p}u + {e}u'))});")
            walk_chunk(f"{q} * {p}u", False)
            if w:
                fold_chunk(f"{q} * {p}u", False)
            ctx.emit("}")
        for i, (r, lns, res) in enumerate(zip(reductions, lanes, results)):
            cur = [ctx.fresh("fold") for _ in ctypes]
            if w:
                vls, f = vlanes[i], combines[i]
                for vl in vls[1:]:
                    ctx.emit(f"{vls[0]} = {f(ctx.lang, vls[0], vl)};")
                ctx.emit(f"{ctypes[0]} {cur[0]} = {ctx.lang.vector_elem(vls[0], 0)};")
                for e in range(1, w):
                    _combine(ctx, r, cur, [ctx.lang.vector_elem(vls[0], e)], cur)
            else:
                for c, ln, ct in zip(cur, lns, ctypes):
                    ctx.emit(f"{ct} {c} = {ln}[0];")
                if p > 1:
                    ctx.emit(ctx.lang.unroll_pragma)
                    ctx.emit(f"for (uint {k} = 1u; {k} < {p}u; ++{k})")
                    _combine(ctx, r, cur, [f"{ln}[{k}]" for ln in lns], cur)
            for dst, c in zip(res, cur):
                ctx.emit(f"{dst.reg}[{o}] = {c};" if isinstance(dst, Tile) else f"{dst} = {c};")
    ctx.emit(f"for (uint {o} = 0u; {o} < {rows}u; ++{o}) {{" if rows > 1 else f"{{ const uint {o} = 0u;")
    ctx.emit_lines(inner)
    ctx.emit("}")
    ctx.scratch_top = base
    return results


def _vector_plan(
    ctx: RenderContext, ctypes: list[str], p: int, reductions: list[O.Reduce]
) -> tuple[int, list[VectorCombine]]:
    """(components per vector partial, each reduction's vector combine), or (0, []) where the partials stay scalar."""
    w = vector_width(ctx, ctypes, p)
    combines = [vector_combine(r, ctypes) for r in reductions] if w else []
    if not w or not all(combines):
        return 0, []
    return w, [c for c in combines if c is not None]


def folds_in_vectors(ctx: RenderContext, op: O.Reduce, n: int, ctypes: list[str]) -> bool:
    """Whether a walk over rows of `n` elements folds reduction `op` into vector partials (one work-item)."""
    p = min(lanes_for(ctx, ct, n) for ct in ctypes)
    return ctx.L == 1 and n > p and _vector_plan(ctx, ctypes, p, [op])[0] > 0


def _vector_read(ctx: RenderContext, ctype: str, w: int, ptr: str) -> str:
    """The `w` elements at `ptr`, a multiple of `w` elements into a register tile or chunk array (aligned to their
    vector's size where the language aligns arrays: TILE_ALIGNMENT is at least 64 bytes)."""
    if ctx.lang.array_alignment(TILE_ALIGNMENT):
        return ctx.lang.aligned_vector_load(ctype, w, ptr)
    return ctx.lang.vector_load(w, ptr)


def _combine(ctx: RenderContext, op: O.Reduce, lhs: list[str], rhs: list[str], targets: list[str]) -> None:
    from .reduce_scan import combine

    combine(ctx, op, lhs, rhs, targets)


def fill_reducing(
    ctx: RenderContext,
    v: Value,
    value: Callable[[Idx], str],
    name: str,
    ahead: Callable[[Idx], str] | None = None,
    whole: WholeRuns | None = None,
) -> Tile | None:
    """Store tile `v` (elements `value(idx)`) into a register tile named `name` and compute the reductions the
    shared tile model fuses into that walk (their results go to `ctx.fused_results`); the tile is not stored when
    only those reductions read it. None (nothing emitted) on work-groups of several work-items or when no
    reduction fuses. `ahead`: addresses to prefetch as the walk goes; `whole`: its unmasked chunks (`walk_rows`)."""
    shape = v.type.shape if v.type.is_tensor else ()
    if ctx.L != 1 or not shape:
        return None
    reductions = fused_row_reductions(v)
    if not reductions:
        return None
    ctype = ctx.ctype(v)
    keep = any(user not in reductions for user, _ in v.uses)
    out = ctx.declare_tile(shape, ctype, name) if keep else None
    for r, res in zip(reductions, walk_rows(ctx, shape, [ctype], [value], out, reductions, ahead, whole)):
        ctx.fused_results[r] = res
    return out if out is not None else Tile(shape, ctype, gen=_unread(v))


def _unread(v: Value) -> Callable[[Idx], str]:
    def gen(idx: Idx) -> str:
        raise AssertionError(f"{v!r} was read after its only readers were fused into its walk")

    return gen
