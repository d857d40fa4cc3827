"""128-bit loads and stores on a multi-work-item group (a GPU): a 1-D tile held in runs of VEC consecutive elements
per work-item (context.VEC) is accessed a run at a time; a run whose VEC pointers are consecutive, whose first
pointer is 16-byte aligned and whose mask is all true (checked at run time) is one vector access, any other run is
VEC scalar accesses. The same addresses are read or written under the same masks either way."""

from __future__ import annotations

from collections.abc import Callable

from .context import Idx, RenderContext, log2, numel

#: element types (their C memory type) accessed as vectors
VECTOR_TYPES = ("float", "int", "uint")


def applies(ctx: RenderContext, shape: tuple[int, ...], mem_ctype: str) -> bool:
    return ctx.vec_of(shape) > 1 and mem_ctype in VECTOR_TYPES


def _runs(ctx: RenderContext, shape: tuple[int, ...], body: Callable[[str, list[Idx]], None]) -> None:
    """Emit `body(slot of the run's first element, the run's element positions)` once per run the work-item holds."""
    v = ctx.vec_of(shape)
    reps = numel(shape) // ctx.L
    g = ctx.fresh("g")
    e0 = f"(({g} * {ctx.L}u + lid) << {log2(v)}u)"
    s0 = f"({g} << {log2(v)}u)"
    idxs = [Idx(shape, lin=f"({e0} + {k}u)", slot=f"({s0} + {k}u)") for k in range(v)]
    with ctx.loop_body() as (inner, base), ctx.indent():
        body(s0, idxs)
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {g} = 0u; {g} < {reps // v}u; ++{g}) {{")
    ctx.emit_lines(inner)
    ctx.emit("}")
    ctx.scratch_top = base


def _run_vars(
    ctx: RenderContext, ptr: object, mask: object | None, idxs: list[Idx], ptype: str
) -> tuple[list[str], list[str], str]:
    """Declare the run's pointers and masks; returns (pointers, masks, the vector-access condition)."""
    ps, ms = [ctx.fresh("p") for _ in idxs], []
    for p, idx in zip(ps, idxs):
        ctx.emit(f"{ptype}{p} = {ctx.element(ptr, idx)};")
    conds = [f"(((ulong){ps[0]}) & {4 * len(ps) - 1}UL) == 0UL"]  # 32-bit elements
    conds += [f"{p} == {ps[0]} + {k}" for k, p in enumerate(ps) if k]
    if mask is not None:
        ms = [ctx.fresh("m") for _ in idxs]
        for m, idx in zip(ms, idxs):
            ctx.emit(f"const bool {m} = {ctx.element(mask, idx)};")
        conds += ms
    return ps, ms, " && ".join(conds)


def load(
    ctx: RenderContext,
    out_reg: str,
    shape: tuple[int, ...],
    mem: str,
    ptype: str,
    ptr: object,
    mask: object | None,
    other: Callable[[Idx], str],
) -> None:
    """`out_reg[slot] = mask ? *ptr : other` for every element, a run at a time."""
    v = ctx.vec_of(shape)
    vtype = f"{mem}{v}"

    def body(s0: str, idxs: list[Idx]) -> None:
        ps, ms, cond = _run_vars(ctx, ptr, mask, idxs, ptype)
        ctx.emit(f"if ({cond}) {{")
        x = ctx.fresh("v")
        ctx.emit(f"  const {vtype} {x} = *((const {ctx.lang.global_qual}{vtype} *)({ps[0]}));")
        for k in range(v):
            ctx.emit(f"  {out_reg}[{s0} + {k}u] = {x}.s{k};")
        ctx.emit("} else {")
        for k, (p, idx) in enumerate(zip(ps, idxs)):
            read = f"*({p})" if mask is None else f"({ms[k]} ? *({p}) : {other(idx)})"
            ctx.emit(f"  {out_reg}[{s0} + {k}u] = {read};")
        ctx.emit("}")

    _runs(ctx, shape, body)


def store(
    ctx: RenderContext,
    shape: tuple[int, ...],
    mem: str,
    ptype: str,
    ptr: object,
    mask: object | None,
    value: Callable[[Idx], str],
) -> None:
    """`if (mask) *ptr = value` for every element, a run at a time."""
    v = ctx.vec_of(shape)
    vtype = f"{mem}{v}"

    def body(s0: str, idxs: list[Idx]) -> None:
        ps, ms, cond = _run_vars(ctx, ptr, mask, idxs, ptype)
        xs = [ctx.fresh("x") for _ in idxs]
        for x, idx in zip(xs, idxs):
            ctx.emit(f"const {mem} {x} = {value(idx)};")
        ctx.emit(f"if ({cond}) {{")
        ctx.emit(f"  *(({ctx.lang.global_qual}{vtype} *)({ps[0]})) = ({vtype})({', '.join(xs)});")
        ctx.emit("} else {")
        for k, (p, x) in enumerate(zip(ps, xs)):
            ctx.emit(f"  *({p}) = {x};" if mask is None else f"  if ({ms[k]}) *({p}) = {x};")
        ctx.emit("}")

    _runs(ctx, shape, body)
