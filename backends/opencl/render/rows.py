"""Loads through a tile of pointers on a one-work-item program (a CPU device): row by row, a row whose pointers
turn out to be consecutive (checked at run time, every element) is read as one contiguous run, which the device
compiler turns into vector loads; any other row is gathered element by element. The same addresses are read under
the same masks either way. A pointer tile carried through a loop (tutorial 03's `a_ptrs += BK`) is opaque to the
device compiler, which otherwise gathers every element. On a CPU device the tile's lines are prefetched first."""

from __future__ import annotations

from collections.abc import Callable

from ..compiler import CPU_FEATURE
from .context import Idx, RenderContext, Tile, numel

#: rows shorter than this are gathered (the check would cost more than it saves)
MIN_ROW = 8
#: on a CPU device every this many pointers of the tile (a 64-byte line of 32-bit elements) are prefetched before
#: the rows are read, so that the rows' cache misses overlap (~20% on tutorial 03's matmul with PoCL)
PREFETCH_STRIDE = 16


def load_rows(ctx: RenderContext, out: Tile, ptr: object, value: Callable[[Idx, str | None], str]) -> bool:
    """Emit `out[e] = value(idx_e, pointer_e)` for every element, by contiguous rows where possible; False (nothing
    emitted) when the fast path does not apply. `value(idx, None)` reads through the tile's own pointer."""
    shape = out.shape
    D = shape[-1] if shape else 1
    if ctx.L != 1 or not isinstance(ptr, Tile) or ptr.reg is None or D < MIN_ROW or numel(shape) < D:
        return False
    rows = numel(shape) // D
    row, j, p0, ok = ctx.fresh("row"), ctx.fresh("j"), ctx.fresh("p0"), ctx.fresh("ok")
    lin = f"({row} * {D}u + {j})"
    idx = Idx(shape, lin=lin, slot=lin)
    with ctx.loop_body() as (inner, base):
        fast, slow = value(idx, f"({p0} + {j})"), value(idx, None)
    if CPU_FEATURE in ctx.features:  # x86/ARM prefetches never fault: masked-off pointers are harmless
        pf = ctx.fresh("pf")
        ctx.emit(
            f"for (uint {pf} = 0u; {pf} < {rows * D}u; {pf} += {PREFETCH_STRIDE}u) __builtin_prefetch({ptr.reg}[{pf}]);"
        )
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
