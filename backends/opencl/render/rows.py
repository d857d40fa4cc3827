"""Loads through a tile of pointers on a one-work-item program (a CPU device), read as contiguous runs the device
compiler turns into vector loads. A pointer tile carried through a loop (tutorial 03's `a_ptrs += BK`) is opaque to
the device compiler, which otherwise gathers every element.

Where AxisInfo proves the last dimension's pointers consecutive over runs of C >= MIN_RUN elements, each run is read
from its first pointer with no check (tutorial 03: a's rows whole, b's in runs of 16). Otherwise each row is checked
at run time (every element): a row whose pointers turn out consecutive is read as one run, any other row gathered
element by element. The same addresses are read under the same masks either way. On a CPU device the tile's lines
are prefetched first."""

from __future__ import annotations

from collections.abc import Callable

from ..compiler import CPU_FEATURE
from .context import Idx, RenderContext, Tile, numel

#: rows shorter than this are gathered (the check would cost more than it saves)
MIN_ROW = 8
#: proven runs at least this long are read from their first pointer
MIN_RUN = 4
#: on a CPU device every this many pointers of the tile (a 64-byte line of 32-bit elements) are prefetched before
#: the rows are read, so that the rows' cache misses overlap (~20% on tutorial 03's matmul with PoCL)
PREFETCH_STRIDE = 16


def load_rows(
    ctx: RenderContext, out: Tile, ptr: object, value: Callable[[Idx, str | None], str], contiguity: int = 1
) -> bool:
    """Emit `out[e] = value(idx_e, pointer_e)` for every element, by contiguous runs where possible; False (nothing
    emitted) when the fast path does not apply. `value(idx, None)` reads through the tile's own pointer;
    `contiguity` is the proven run length of the pointers along the last dimension."""
    shape = out.shape
    D = shape[-1] if shape else 1
    if ctx.L != 1 or not isinstance(ptr, Tile) or numel(shape) < D:
        return False
    if min(contiguity, D) >= MIN_RUN:
        _proven_runs(ctx, out, ptr, value, min(contiguity, D))
        return True
    if D < MIN_ROW or ptr.reg is None:
        return False
    rows = numel(shape) // D
    row, j, p0, ok = ctx.fresh("row"), ctx.fresh("j"), ctx.fresh("p0"), ctx.fresh("ok")
    lin = f"({row} * {D}u + {j})"
    idx = Idx(shape, lin=lin, slot=lin)
    with ctx.loop_body() as (inner, base):
        fast, slow = value(idx, f"({p0} + {j})"), value(idx, None)
    _prefetch(ctx, ptr, rows * D)
    ctx.emit(f"for (uint {row} = 0u; {row} < {rows}u; ++{row}) {{")
    with ctx.indent():
        ctx.emit_lines(inner)
        ctx.emit(f"{ptr.ctype}{p0} = {ptr.reg}[{row} * {D}u];")
        ctx.emit(f"int {ok} = 1;")
        ctx.emit(f"for (uint {j} = 0u; {j} < {D}u; ++{j}) {ok} &= ({ptr.reg}[{lin}] == {p0} + {j});")
        ctx.emit(f"if ({ok}) {{")
        ctx.emit(f"  for (uint {j} = 0u; {j} < {D}u; ++{j}) {out.reg}[{lin}] = {fast};")
        ctx.emit("} else {")
        ctx.emit(f"  for (uint {j} = 0u; {j} < {D}u; ++{j}) {out.reg}[{lin}] = {slow};")
        ctx.emit("}")
    ctx.emit("}")
    ctx.scratch_top = base
    return True


def _prefetch(ctx: RenderContext, ptr: Tile, n: int) -> None:
    if CPU_FEATURE in ctx.features:  # x86/ARM prefetches never fault: masked-off pointers are harmless
        pf = ctx.fresh("pf")
        with ctx.loop_body() as (inner, base):
            p = ctx.element(ptr, Idx(ptr.shape, lin=pf, slot=pf))
        ctx.emit(f"for (uint {pf} = 0u; {pf} < {n}u; {pf} += {PREFETCH_STRIDE}u) {{")
        with ctx.indent():
            ctx.emit_lines(inner)
            ctx.emit(f"__builtin_prefetch({p});")
        ctx.emit("}")
        ctx.scratch_top = base


def _proven_runs(ctx: RenderContext, out: Tile, ptr: Tile, value: Callable[[Idx, str | None], str], C: int) -> None:
    """Every run of C elements read from its first pointer: the analysis proved the C pointers consecutive."""
    n = numel(out.shape)
    q, j, p0 = ctx.fresh("q"), ctx.fresh("j"), ctx.fresh("p0")
    lin = f"({q} * {C}u + {j})"
    idx = Idx(out.shape, lin=lin, slot=lin)
    first = f"({q} * {C}u)"
    with ctx.loop_body() as (inner, base):
        fast = value(idx, f"({p0} + {j})")
        start = ctx.element(ptr, Idx(out.shape, lin=first, slot=first))
    _prefetch(ctx, ptr, n)
    ctx.emit(f"for (uint {q} = 0u; {q} < {n // C}u; ++{q}) {{")
    with ctx.indent():
        ctx.emit_lines(inner)
        ctx.emit(f"{ptr.ctype}{p0} = {start};")
        ctx.emit(f"for (uint {j} = 0u; {j} < {C}u; ++{j}) {out.reg}[{lin}] = {fast};")
    ctx.emit("}")
    ctx.scratch_top = base
