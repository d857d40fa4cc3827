"""128-bit loads and stores on a multi-work-item group (a GPU): a tile held in runs of VEC consecutive elements per
work-item (context.VEC: 1-D tiles, and 2-D ones along their rows) is accessed a run at a time.

What AxisInfo (triton_backend_sdk.analysis.axis_info) proves about a run is not checked again: pointers proven
consecutive and 16-byte aligned are one `*(global float4 *)` access, consecutive but not proven aligned one
`vload4`/`vstore4` (element alignment suffices), and a mask proven the same over the run is tested once (not at all
where there is none). What it cannot prove is checked at run time per run, as Triton's CUDA path would not: a run
whose pointers turn out consecutive, aligned and unmasked is one vector access, any other run VEC scalar accesses.
The same addresses are read or written under the same masks either way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .context import Idx, RenderContext, log2, numel

#: element types (their C memory type) accessed as vectors
VECTOR_TYPES = ("float", "int", "uint")


@dataclass(frozen=True)
class Proof:
    """What the analysis proves for every run of VEC elements of one access."""

    consecutive: bool = False
    aligned: bool = False
    #: the mask is the same over each run (or there is none)
    uniform_mask: bool = False


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


class _Run:
    """The run's pointers and masks as C variables, and the condition (run-time checks of what is not proven) under
    which it is one vector access."""

    def __init__(self, ctx: RenderContext, ptr: object, mask: object | None, idxs: list[Idx], ptype: str, proof: Proof):
        self.p0 = ctx.fresh("p")
        ctx.emit(f"{ptype}{self.p0} = {ctx.element(ptr, idxs[0])};")
        self.ps = [self.p0]
        conds = []
        if not proof.consecutive:
            self.ps += [ctx.fresh("p") for _ in idxs[1:]]
            for p, idx in zip(self.ps[1:], idxs[1:]):
                ctx.emit(f"{ptype}{p} = {ctx.element(ptr, idx)};")
            conds += [f"{p} == {self.p0} + {k}" for k, p in enumerate(self.ps) if k]
        else:
            self.ps += [f"({self.p0} + {k})" for k in range(1, len(idxs))]
        #: the vector access needs no alignment check: proven aligned, or vload/vstore (element-aligned) is used
        self.aligned = proof.aligned
        if not proof.consecutive and not proof.aligned:
            conds.insert(0, f"(((ulong){self.p0}) & {4 * len(idxs) - 1}UL) == 0UL")  # 32-bit elements
            self.aligned = True
        self.ms: list[str] = []
        if mask is not None:
            n = 1 if proof.uniform_mask else len(idxs)
            self.ms = [ctx.fresh("m") for _ in range(n)]
            for m, idx in zip(self.ms, idxs):
                ctx.emit(f"const bool {m} = {ctx.element(mask, idx)};")
            conds += self.ms
        self.cond = " && ".join(conds)
        #: the scalar fallback can only be reached when pointers or masks vary within the run
        self.uniform = proof.consecutive and (mask is None or proof.uniform_mask)

    def mask(self, k: int) -> str | None:
        if not self.ms:
            return None
        return self.ms[0] if len(self.ms) == 1 else self.ms[k]


def load(
    ctx: RenderContext,
    out_reg: str,
    shape: tuple[int, ...],
    mem: str,
    ptype: str,
    ptr: object,
    mask: object | None,
    other: Callable[[Idx], str],
    proof: Proof = Proof(),
) -> None:
    """`out_reg[slot] = mask ? *ptr : other` for every element, a run at a time."""
    v = ctx.vec_of(shape)
    vtype = ctx.lang.vector_type(mem, v)

    def body(s0: str, idxs: list[Idx]) -> None:
        run = _Run(ctx, ptr, mask, idxs, ptype, proof)
        x = ctx.fresh("v")
        if run.aligned:
            read = f"*((const {ctx.lang.global_qual}{vtype} *)({run.p0}))"
        else:
            read = ctx.lang.vector_load(v, run.p0)
        vector = [f"const {vtype} {x} = {read};"]
        vector += [f"{out_reg}[{s0} + {k}u] = {ctx.lang.vector_elem(x, k)};" for k in range(v)]
        if run.uniform:
            fallback = [f"{out_reg}[{s0} + {k}u] = {other(idx)};" for k, idx in enumerate(idxs)]
        else:
            fallback = []
            for k, (p, idx) in enumerate(zip(run.ps, idxs)):
                m = run.mask(k)
                fallback.append(
                    f"{out_reg}[{s0} + {k}u] = {f'*({p})' if m is None else f'({m} ? *({p}) : {other(idx)})'};"
                )
        _choose(ctx, run.cond, vector, fallback)

    _runs(ctx, shape, body)


def store(
    ctx: RenderContext,
    shape: tuple[int, ...],
    mem: str,
    ptype: str,
    ptr: object,
    mask: object | None,
    value: Callable[[Idx], str],
    proof: Proof = Proof(),
) -> None:
    """`if (mask) *ptr = value` for every element, a run at a time."""
    v = ctx.vec_of(shape)
    vtype = ctx.lang.vector_type(mem, v)

    def body(s0: str, idxs: list[Idx]) -> None:
        run = _Run(ctx, ptr, mask, idxs, ptype, proof)
        xs = [ctx.fresh("x") for _ in idxs]
        for x, idx in zip(xs, idxs):
            ctx.emit(f"const {mem} {x} = {value(idx)};")
        vec = ctx.lang.vector_literal(mem, xs)
        if run.aligned:
            vector = [f"*(({ctx.lang.global_qual}{vtype} *)({run.p0})) = {vec};"]
        else:
            vector = [ctx.lang.vector_store(v, vec, run.p0)]
        fallback = []
        if not run.uniform:
            for k, (p, x) in enumerate(zip(run.ps, xs)):
                m = run.mask(k)
                fallback.append(f"*({p}) = {x};" if m is None else f"if ({m}) *({p}) = {x};")
        _choose(ctx, run.cond, vector, fallback)

    _runs(ctx, shape, body)


def _choose(ctx: RenderContext, cond: str, vector: list[str], fallback: list[str]) -> None:
    if not cond:
        for line in vector:
            ctx.emit(line)
        return
    ctx.emit(f"if ({cond}) {{")
    for line in vector:
        ctx.emit(f"  {line}")
    if fallback:
        ctx.emit("} else {")
        for line in fallback:
            ctx.emit(f"  {line}")
    ctx.emit("}")
