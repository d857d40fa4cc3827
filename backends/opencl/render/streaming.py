"""Non-temporal stores on a one-work-item program (a CPU device): the stores sdk/analysis/streaming_stores.py allows,
written a vector at a time with the language's streaming store.

A run of W elements (the descriptor's vector width) whose pointers AxisInfo proves consecutive is computed into a
small array under its mask; where the whole run is unmasked and its first address is aligned to the vector's size
(checked at run time: Triton proves 16 bytes, the store needs 64 on AVX-512) it is written as one non-temporal
vector, else element by element under the mask as an ordinary store would be. One fence after the loop orders the
weakly-ordered stores before the program ends, as the language requires.
"""

from __future__ import annotations

from triton_backend_sdk.analysis.axis_info import axis_info_of
from triton_backend_sdk.analysis.streaming_stores import streaming_programs
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.types import IntType, Type

from . import ctypes as CT
from .context import Idx, RenderContext, numel

#: element types written as vectors (the language's vector types of the memory type, one element each)
_VECTOR_CTYPES = frozenset({"float", "double", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"})


def stream_width(ctx: RenderContext, op: O.Store, t: Type) -> int:
    """Elements per non-temporal vector for store `op` of memory type `t`, or 0 where it is an ordinary store
    (`ctx.streaming_stores` and `ctx.launch_streaming_stores` are empty unless the program is one work-item on a
    device with a streaming store; a store of the second streams only where the launch is large: memory.py)."""
    if op not in ctx.streaming_stores and op not in ctx.launch_streaming_stores:
        return 0
    mem = CT.mem_ctype(t)
    if mem not in _VECTOR_CTYPES or ctx.ctype(op.value) != mem or (isinstance(t, IntType) and t.width == 1):
        return 0
    w = min(16, ctx.vector_bits // (8 * CT.size_of(mem)))
    shape = op.value.type.shape
    info = axis_info_of(op)
    if w < 2 or not shape or shape[-1] % w or info is None or info.contiguity(op.ptr) < w:
        return 0
    return w


def launch_is_large(op: O.Store) -> str:
    """A condition: the launch has at least `streaming_programs(op)` programs (it writes LAUNCH_STREAM_BYTES
    through op)."""
    return f"(ulong)tb_npid0 * (ulong)tb_npid1 * (ulong)tb_npid2 >= {streaming_programs(op)}ul"


def render_streaming_store(ctx: RenderContext, op: O.Store, t: Type, w: int) -> None:
    """Emit store `op` (stream_width(...) == w > 0) as non-temporal vectors of `w` elements where a run allows."""
    nt = ctx.lang.streaming_store(ctx.features)
    assert nt is not None
    mem = CT.mem_ctype(t)
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    n = numel(op.value.type.shape)
    c, j, buf, full, p0 = ctx.fresh("c"), ctx.fresh("j"), ctx.fresh("nt"), ctx.fresh("full"), ctx.fresh("p")
    lin = f"({c} * {w}u + {j})"
    idx = Idx(op.value.type.shape, lin=lin)
    with ctx.loop_body() as (inner, base):
        m = ctx.element(mask, idx) if mask is not None else None
        v = ctx.element(val, idx)
        first = ctx.element(ptr, Idx(op.value.type.shape, lin=f"({c} * {w}u)"))
        at = ctx.element(ptr, idx)
    vec = ctx.lang.vector_type(mem, w)
    g = ctx.lang.global_qual
    ctx.emit(f"for (uint {c} = 0u; {c} < {n // w}u; ++{c}) {{")
    with ctx.indent():
        ctx.emit_lines(inner)
        aligned = ctx.lang.array_alignment(CT.size_of(mem) * w)  # "": the language cannot align the array
        ctx.emit(f"{mem} {buf}[{w}]{aligned};")
        ctx.emit(f"int {full} = 1;")
        ctx.emit(f"for (uint {j} = 0u; {j} < {w}u; ++{j}) {{")
        if m is None:
            ctx.emit(f"  {buf}[{j}] = {v};")
        else:  # computed under the mask: a load deferred into this loop reads nothing masked off
            ctx.emit(f"  const int tb_m = {m};")
            ctx.emit(f"  {buf}[{j}] = tb_m ? {v} : ({mem})0;")
            ctx.emit(f"  {full} &= tb_m;")
        ctx.emit("}")
        ctx.emit(f"{g}{mem} *{p0} = {first};")
        ctx.emit(f"if ({full} && ((ulong){p0} & {CT.size_of(mem) * w - 1}ul) == 0ul) {{")
        load = ctx.lang.aligned_vector_load(mem, w, buf) if aligned else ctx.lang.vector_load(w, buf)
        store = nt.store.format(value=load, ptr=f"({g}{vec} *){p0}")
        ctx.emit(f"  {store}")
        ctx.emit("} else {")
        guard = "" if m is None else f"if ({m}) "
        ctx.emit(f"  for (uint {j} = 0u; {j} < {w}u; ++{j}) {guard}{{ *({at}) = {buf}[{j}]; }}")
        ctx.emit("}")
    ctx.emit("}")
    ctx.emit(nt.fence)
    ctx.scratch_top = base
