"""Memory rules: pointer arithmetic, loads and stores (shared C-like), atomics (OpenCL built-ins).

Masked-off elements are never touched: a load is `mask ? *p : other` (C evaluates only the chosen operand) and a
store is done under `if (mask)`. Stores and atomics are done by the work-item that owns the element, scalar ones by
work-item 0. Atomics follow Triton's memory semantics with global fences around OpenCL 1.2's relaxed atomics (the
device's own device-scope fence where it has one: language.device_fence); float atomic add, which OpenCL 1.2 lacks,
is a compare-and-swap loop.
"""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.analysis.axis_info import axis_info_of, proven_uniform
from triton_backend_sdk.analysis.tile_model import row_prefetch_distance
from triton_backend_sdk.analysis.uses import load_sink, mask_implied_by_sink
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op, Value
from triton_backend_sdk.ir.enums import MemSemantic, RMWOp
from triton_backend_sdk.ir.types import FloatKind, FloatType, IntType, PointerType, Type

from ..compiler import CPU_FEATURE
from . import ctypes as CT
from . import vec4
from .context import Idx, RenderContext, Tile
from .elementwise import lift
from .row_walk import WholeRuns, fill_reducing
from .rows import MIN_RUN, load_rows
from .rules import CSTYLE_RULES, OPENCL_RULES
from .streaming import launch_is_large, render_streaming_store, stream_width
from .subword_atomics import cas_helper, rmw_helper


@CSTYLE_RULES.register(O.AddPtr)
def render_addptr(ctx: RenderContext, op: O.AddPtr) -> None:
    lift(ctx, op, lambda p, o: f"({p} + {o})")


def pointee(ctx: RenderContext, ptr: Value, op: Op) -> Type:
    e = ptr.type.element
    assert isinstance(e, PointerType)
    try:
        CT.mem_ctype(e.pointee)
    except CT.TypeError_ as err:
        raise ctx.unsupported(f"memory access to elements of type {err}", op) from None
    if CT.is_f64(e.pointee):
        ctx.require_fp64(op)
    return e.pointee


def load_expr(ctx: RenderContext, t: Type, p: str, volatile: bool = False) -> str:
    if CT.fp8_of(t) is not None:
        return f"{ctx.fp8_helper(t, 'dec')}(*({p}))"
    if CT.is_half(t):
        return f"{ctx.helper('tb_h2f_load')}({ctx.lang.half_load.format(ptr=p)}, *({p}))"
    if CT.is_bf16(t):
        return ctx.lang.bitcast("float", f"(uint)(*({p})) << 16")
    if volatile:
        p = f"(volatile {ctx.lang.global_qual}{CT.mem_ctype(t)} *)({p})"
    if isinstance(t, IntType) and t.width == 1:
        return f"(*({p}) != 0)"
    return f"*({p})"


def store_stmt(ctx: RenderContext, t: Type, p: str, v: str) -> str:
    if CT.fp8_of(t) is not None:
        return f"*({p}) = {ctx.fp8_helper(t, 'code')}({v});"
    if CT.is_half(t):  # a NaN by its bits (tb_h2bits), so that a loaded signaling NaN is stored unchanged
        h2bits = ctx.helper("tb_h2bits")
        return (
            f"{{ float tb_v = {v}; if (isnan(tb_v)) *({p}) = {h2bits}(tb_v); "
            f"else {ctx.lang.half_store.format(value='tb_v', ptr=p)}; }}"
        )
    if CT.is_bf16(t):
        return f"*({p}) = (ushort)({ctx.lang.bitcast('uint', v)} >> 16);"
    if isinstance(t, IntType) and t.width == 1:
        return f"*({p}) = (char)({v});"
    return f"*({p}) = {v};"


def zero_of(ctype: str) -> str:
    return {"float": "0.0f", "double": "0.0", "bool": "false"}.get(ctype, f"({ctype})0")


def _shared_from_item0(ctx: RenderContext, res: Value, ctype: str, stmt: Callable[[str], str]) -> None:
    """A scalar result computed by work-item 0 alone (`stmt(cell)` writes it to the lvalue `cell` in local memory)
    and read by every work-item after a barrier, so that a side effect happens once and all work-items see the same
    value. A work-group of one work-item has no one to share it with: a private variable, no local memory."""
    name = ctx.name_for(res)
    if ctx.L == 1:
        cell = f"{name}_1"
        ctx.emit(f"{ctype} {cell} = {zero_of(ctype)};")
        ctx.emit(stmt(cell))
        ctx.emit(f"{ctype} {name} = {cell};")
        ctx.define(res, name)
        return
    off = ctx.alloc(8)
    cell = ctx.local_array(ctype, off)["0"]
    ctx.barrier()
    ctx.emit(f"if (lid == 0u) {stmt(cell)}")
    ctx.barrier()
    ctx.emit(f"{ctype} {name} = {cell};")
    ctx.scratch_top = off
    ctx.define(res, name)


#: cost of a deferred load in a generator (above CHEAP: a generator that reads it and is used twice is stored)
LOAD_COST = 8


def _deferred_sink(ctx: RenderContext, op: O.Load, ptr: object) -> Op | None:
    """The op in whose loop a tile load on a one-work-item program (a CPU device) is read (see
    `triton_backend_sdk.analysis.uses`), or None. The row-wise path (`load_rows`) is kept for pointer tiles held in
    registers, for pointers computed from such a tile that AxisInfo proves run in rows (a carried pointer offset:
    `start[i] + off`, which the device compiler would gather element by element), and for a load a `tl.dot` reads
    (the product wants the operand whole in registers)."""
    if ctx.L != 1 or (isinstance(ptr, Tile) and ptr.reg is not None):
        return None
    if isinstance(ptr, Tile) and not ptr.index_only and _contiguity(op, op.ptr) >= MIN_RUN:
        return None
    if any(isinstance(user, O.Dot) for user, _ in op.result.uses):
        return None
    return load_sink(op)


def _proof(ctx: RenderContext, op: Op, ptr: Value, mask: Value | None) -> vec4.Proof:
    """What AxisInfo proves about the runs of a vectorized access (nothing outside a function)."""
    info = axis_info_of(op)
    if info is None:
        return vec4.Proof()
    return vec4.Proof(*info.vector_run(ptr, mask, ctx.vec_of(ptr.type.shape)))


def _contiguity(op: Op, ptr: Value) -> int:
    info = axis_info_of(op)
    return 1 if info is None else info.contiguity(ptr)


def _row_ahead(ctx: RenderContext, op: O.Load, ptr: object, t: Type) -> Callable[[Idx], str] | None:
    """Where a row walk over this load prefetches on a CPU device (`row_walk.walk_rows`): the element's pointer the
    shared tile model's distance further on (`row_prefetch_distance`), or None."""
    if CPU_FEATURE not in ctx.features or not isinstance(ptr, Tile):
        return None
    ahead = row_prefetch_distance(CT.size_of(CT.mem_ctype(t)), op.result.type.shape[-1], _contiguity(op, op.ptr))
    if ahead is None:
        return None
    return lambda idx: f"({ctx.element(ptr, idx)}) + {ahead}"


def _whole_runs(ctx: RenderContext, op: O.Load, mask: object, value: Callable[..., str]) -> WholeRuns | None:
    """A masked load's runs of elements along the row over which AxisInfo proves its mask the same (a row walk then
    reads a chunk whose runs test true without the mask), or None."""
    info = axis_info_of(op)
    if op.mask is None or info is None or not op.result.type.is_tensor:
        return None
    run = info.mask_constancy(op.mask)
    if run < 2:
        return None
    return WholeRuns(run, lambda idx: ctx.element(mask, idx), [lambda idx: value(idx, guarded=False)])


@CSTYLE_RULES.register(O.Load)
def render_load(ctx: RenderContext, op: O.Load) -> None:
    t = pointee(ctx, op.ptr, op)
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    res = op.result
    ctype = ctx.ctype(res)
    volatile = op.is_volatile

    def value(idx: Idx, p: str | None = None, guarded: bool = True) -> str:
        read = load_expr(ctx, t, p or ctx.element(ptr, idx), volatile)
        if mask is None or not guarded:
            return read
        alt = ctx.element(other, idx) if other is not None else zero_of(ctype)
        return f"({ctx.element(mask, idx)} ? {read} : {alt})"

    if not res.type.is_tensor:
        if volatile:  # may change between work-items' reads (a flag polled in a loop): read once, share the value
            _shared_from_item0(ctx, res, ctype, lambda cell: f"{cell} = {value(Idx((), lin='0u'))};")
            return
        ctx.define(res, value(Idx((), lin="0u")))
        return
    if not volatile and proven_uniform(res):
        # one address (and mask) at every index: read once here, a named scalar (RenderContext._uniform), instead
        # of a register tile filled by every work-item with run-time checks that the addresses are consecutive
        ctx.define(res, Tile(res.type.shape, ctype, gen=value, cost=LOAD_COST))
        return
    sink = None if volatile else _deferred_sink(ctx, op, ptr)
    if sink is not None:
        # read inside the store's `if (mask)` (render_store, one work-item): a load under that same mask at that
        # same element needs no test of its own (the float->int guards read it five times)
        guarded = not mask_implied_by_sink(op, sink)
        gen = value if guarded else (lambda idx: value(idx, guarded=False))
        ctx.define(res, Tile(res.type.shape, ctype, gen=gen, cost=LOAD_COST))
        return
    name = ctx.name_for(res, "t")
    fused = (
        None
        if volatile
        else fill_reducing(ctx, res, value, name, _row_ahead(ctx, op, ptr, t), _whole_runs(ctx, op, mask, value))
    )
    if fused is not None:
        ctx.define(res, fused)
        return
    out = ctx.declare_tile(res.type.shape, ctype, name)
    if not volatile and vec4.applies(ctx, out.shape, CT.mem_ctype(t)) and ctype == CT.mem_ctype(t):
        vec4.load(
            ctx,
            out.reg,
            out.shape,
            ctype,
            ctx.ctype(op.ptr),
            ptr,
            mask,
            lambda idx: ctx.element(other, idx) if other is not None else zero_of(ctype),
            _proof(ctx, op, op.ptr, op.mask),
        )
    elif not load_rows(ctx, out, ptr, value, _contiguity(op, op.ptr)):
        ctx.tile_loop(out.shape, lambda idx: ctx.emit(f"{out.reg}[{idx.slot}] = {value(idx)};"))
    ctx.define(res, out)


@CSTYLE_RULES.register(O.Store)
def render_store(ctx: RenderContext, op: O.Store) -> None:
    t = pointee(ctx, op.ptr, op)
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None

    def stmt(idx: Idx) -> str:
        s = store_stmt(ctx, t, ctx.element(ptr, idx), ctx.element(val, idx))
        return s if mask is None else f"if ({ctx.element(mask, idx)}) {{ {s} }}"

    if not op.value.type.is_tensor:
        ctx.emit(f"if (lid == 0u) {{ {stmt(Idx((), lin='0u'))} }}")
        return
    w = stream_width(ctx, op, t)
    if w and op in ctx.streaming_stores:
        render_streaming_store(ctx, op, t, w)
        return
    if w:  # a smaller tile: streams where the launch writes LAUNCH_STREAM_BYTES through it
        ctx.emit(f"if ({launch_is_large(op)}) {{")
        with ctx.indent():
            render_streaming_store(ctx, op, t, w)
        ctx.emit("} else {")
        with ctx.indent():
            _ordinary_store(ctx, op, t, stmt)
        ctx.emit("}")
        return
    _ordinary_store(ctx, op, t, stmt)


def _ordinary_store(ctx: RenderContext, op: O.Store, t: Type, stmt: Callable[[Idx], str]) -> None:
    mem = CT.mem_ctype(t)
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    if vec4.applies(ctx, op.value.type.shape, mem) and ctx.ctype(op.value) == mem:
        proof = _proof(ctx, op, op.ptr, op.mask)
        vec4.store(
            ctx, op.value.type.shape, mem, ctx.ctype(op.ptr), ptr, mask, lambda idx: ctx.element(val, idx), proof
        )
        return
    ctx.tile_loop(op.value.type.shape, lambda idx: ctx.emit(stmt(idx)), owner=True)


# ---- atomics ---------------------------------------------------------------------------------------------------------

#: the language's atomic of each integer RMWOp (the unsigned ones on an unsigned pointer)
_INT_ATOMIC = {
    RMWOp.ADD: "add",
    RMWOp.AND: "and",
    RMWOp.OR: "or",
    RMWOp.XOR: "xor",
    RMWOp.XCHG: "xchg",
    RMWOp.MAX: "max",
    RMWOp.MIN: "min",
    RMWOp.UMAX: "max",
    RMWOp.UMIN: "min",
}
_INT64_BASE = {RMWOp.ADD, RMWOp.XCHG}


def _require_int64_atomics(ctx: RenderContext, extended: bool, op: Op, dtype: str) -> None:
    needed = ["cl_khr_int64_base_atomics"] + (["cl_khr_int64_extended_atomics"] if extended else [])
    missing = [e for e in needed if e not in ctx.features]
    if missing:
        raise ctx.unsupported(f"{dtype} atomics: device {ctx.device!r} lacks {', '.join(missing)}", op)
    ctx.uses_int64_atomics = True


def _subword(ctx: RenderContext, made: tuple[str, str, tuple[str, ...]] | None) -> str | None:
    """The name of an 8/16-bit atomic helper (subword_atomics.py), added to the program with its dependencies."""
    if made is None:
        return None
    name, text, deps = made
    for d in deps:
        ctx.helper(d)
    return ctx.define_helper(name, text)


def _rmw_expr(ctx: RenderContext, op: O.AtomicRMW, t: Type, p: str, v: str) -> str:
    kind = op.rmw_op
    g = ctx.lang.global_qual
    fn = _subword(ctx, rmw_helper(kind, t, ctx.lang))
    if fn is not None:
        return f"{fn}({p}, {v})"
    if isinstance(t, FloatType):
        if t.kind == FloatKind.F32 and kind in (RMWOp.FADD, RMWOp.ADD):
            return f"{ctx.helper('tb_atomic_add_f32')}((volatile {g}float *)({p}), {v})"
        if t.kind == FloatKind.F32 and kind == RMWOp.XCHG:
            return ctx.lang.atomic("xchg", 32, f"(volatile {g}float *)({p})", v)
        if t.kind == FloatKind.F64 and kind in (RMWOp.FADD, RMWOp.ADD):
            _require_int64_atomics(ctx, False, op, "fp64")
            return f"{ctx.helper('tb_atomic_add_f64')}((volatile {g}double *)({p}), {v})"
        if t.kind == FloatKind.F64 and kind == RMWOp.XCHG:
            _require_int64_atomics(ctx, False, op, "fp64")
            b = ctx.lang.bitcast
            return b("double", ctx.lang.atomic("xchg", 64, f"(volatile {g}ulong *)({p})", b("ulong", v)))
        raise ctx.unsupported(f"atomic {kind.value} on {CT.DTYPE_NAMES.get(t.kind, str(t))}", op)
    if not isinstance(t, IntType) or t.width not in (32, 64) or kind == RMWOp.FADD:
        raise ctx.unsupported(f"atomic {kind.value} on {t}", op)
    unsigned = kind in (RMWOp.UMAX, RMWOp.UMIN)
    T = CT.ctype(t)
    PT = CT.uctype(t) if unsigned else T
    if t.width == 64:
        _require_int64_atomics(ctx, kind not in _INT64_BASE, op, "i64")
    return f"(({T}){ctx.lang.atomic(_INT_ATOMIC[kind], t.width, f'(volatile {g}{PT} *)({p})', f'({PT})({v})')})"


def _cas_expr(ctx: RenderContext, op: O.AtomicCAS, t: Type, p: str, c: str, v: str) -> str:
    g = ctx.lang.global_qual
    fn = _subword(ctx, cas_helper(t, ctx.lang))
    if fn is not None:
        return f"{fn}({p}, {c}, {v})"
    cas, b = ctx.lang.atomic, ctx.lang.bitcast
    if isinstance(t, IntType) and t.width == 32:
        return cas("cmpxchg", 32, f"(volatile {g}int *)({p})", c, v)
    if isinstance(t, IntType) and t.width == 64:
        _require_int64_atomics(ctx, False, op, "i64")
        return cas("cmpxchg", 64, f"(volatile {g}long *)({p})", c, v)
    if isinstance(t, FloatType) and t.kind == FloatKind.F32:
        return b("float", cas("cmpxchg", 32, f"(volatile {g}uint *)({p})", b("uint", c), b("uint", v)))
    if isinstance(t, FloatType) and t.kind == FloatKind.F64:
        _require_int64_atomics(ctx, False, op, "fp64")
        return b("double", cas("cmpxchg", 64, f"(volatile {g}ulong *)({p})", b("ulong", c), b("ulong", v)))
    raise ctx.unsupported(f"atomic_cas on {t}", op)


def _fenced(ctx: RenderContext, sem: MemSemantic, stmt: str) -> str:
    before = sem in (MemSemantic.RELEASE, MemSemantic.ACQUIRE_RELEASE)
    after = sem in (MemSemantic.ACQUIRE, MemSemantic.ACQUIRE_RELEASE)
    fence = ctx.lang.device_fence(ctx.features) or ctx.lang.global_fence
    return f"{fence + ' ' if before else ''}{stmt}{' ' + fence if after else ''}"


def _render_atomic(
    ctx: RenderContext, op: Op, sem: MemSemantic, ptr: Value, mask: Value | None, expr: Callable[[Idx, Type], str]
) -> None:
    """Run `expr(idx)` once per element (by its owner), with fences; the old values become the op's result."""
    t = pointee(ctx, ptr, op)
    res = op.result
    ctype = ctx.ctype(res)
    m = ctx.get(mask) if mask is not None else None

    def cond(idx: Idx) -> str:
        return "" if m is None else f"{ctx.element(m, idx)}"

    if not res.type.is_tensor:
        c = cond(Idx((), lin="0u"))

        def item0(cell: str) -> str:
            stmt = f"{cell} = {expr(Idx((), lin='0u'), t)};"
            guarded = (
                f"if ({c}) {{ {_fenced(ctx, sem, stmt)} }} else {{ {cell} = {zero_of(ctype)}; }}"
                if c
                else _fenced(ctx, sem, stmt)
            )
            return f"{{ {guarded} }}"

        _shared_from_item0(ctx, res, ctype, item0)
        return
    shape = res.type.shape
    n = Tile(shape, ctype).numel
    out = ctx.declare_tile(shape, ctype, ctx.name_for(res, "t"))
    own = f"lid < {n}u" if n < ctx.L else ""

    def body(idx: Idx) -> str:
        c = " && ".join(x for x in (own, cond(idx)) if x)
        stmt = f"{out.reg}[{idx.slot}] = {expr(idx, t)};"
        if not c:
            return _fenced(ctx, sem, stmt)
        return f"if ({c}) {{ {_fenced(ctx, sem, stmt)} }} else {{ {out.reg}[{idx.slot}] = {zero_of(ctype)}; }}"

    ctx.tile_loop(shape, lambda idx: ctx.emit(body(idx)))
    if n < ctx.L and res.uses:  # work-items holding duplicates take the owner's old value
        off = ctx.alloc(n * CT.size_of(ctype))
        arr = ctx.local_array(ctype, off)
        ctx.barrier()
        ctx.emit(f"if (lid < {n}u) {arr['lid']} = {out.reg}[0];")
        ctx.barrier()
        ctx.emit(f"{out.reg}[0] = {arr[f'lid & {n - 1}u']};")
        ctx.scratch_top = off
    ctx.define(res, out)


@OPENCL_RULES.register(O.AtomicRMW)
def render_atomic_rmw(ctx: RenderContext, op: O.AtomicRMW) -> None:
    ptr, val = ctx.get(op.ptr), ctx.get(op.val)
    _render_atomic(
        ctx,
        op,
        op.sem,
        op.ptr,
        op.mask,
        lambda idx, t: _rmw_expr(ctx, op, t, ctx.element(ptr, idx), ctx.element(val, idx)),
    )


@OPENCL_RULES.register(O.AtomicCAS)
def render_atomic_cas(ctx: RenderContext, op: O.AtomicCAS) -> None:
    ptr, cmp, val = (ctx.get(v) for v in (op.ptr, op.cmp, op.val))
    _render_atomic(
        ctx,
        op,
        op.sem,
        op.ptr,
        None,
        lambda idx, t: _cas_expr(ctx, op, t, ctx.element(ptr, idx), ctx.element(cmp, idx), ctx.element(val, idx)),
    )


@OPENCL_RULES.register(O.Histogram)
def render_histogram(ctx: RenderContext, op: O.Histogram) -> None:
    """Counts in local memory with local atomics (values outside [0, bins) are ignored, as on the GPU; 3.9's
    optional mask drops masked-off elements), then read back into the result's layout."""
    src_v = op.src
    src = ctx.get(src_v)
    mask = ctx.get(op.mask) if op.mask is not None else None
    res = op.result
    bins = res.type.shape[0]
    if CT.int_width(src_v.type) not in (32, 64) or ctx.ctype(res) != "int":
        raise ctx.unsupported(f"tt.histogram of {src_v.type.element} into {res.type.element}", op)
    base = ctx.scratch_top
    arr = ctx.local_array("int", ctx.alloc(bins * 4))
    ctx.barrier()
    t = ctx.fresh("t")
    ctx.emit(f"for (uint {t} = lid; {t} < {bins}u; {t} += {ctx.L}u) {arr[t]} = 0;")
    ctx.barrier()

    def count(idx: Idx) -> None:
        v = ctx.element(src, idx)
        cond = f"(ulong)({v}) < {bins}UL"
        if mask is not None:
            cond = f"{ctx.element(mask, idx)} && {cond}"
        ctx.emit(f"if ({cond}) {ctx.lang.atomic('inc', 32, arr.address(f'(uint)({v})'))};")

    ctx.tile_loop(src_v.type.shape, count, owner=True)
    ctx.barrier()
    out = ctx.declare_tile(res.type.shape, "int", ctx.name_for(res, "t"))
    ctx.tile_loop(out.shape, lambda idx: ctx.emit(f"{out.reg}[{idx.slot}] = {arr[idx.lin]};"))
    ctx.scratch_top = base
    ctx.define(res, out)
