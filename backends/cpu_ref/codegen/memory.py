"""Pointer arithmetic, loads and stores.

A masked-off lane never touches memory: loads and stores are guarded per element by a branch, which LLVM's
vectorizer turns into masked vector loads/stores on AVX2/AVX-512.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.analysis.uses import load_sink
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.ir.core import Value

from .context import LoweringContext, Tile
from .elementwise import lift
from .rules import RULES
from .types import I1, I64, PTR, llvm_type, storage_type


def pointee_storage(t: T.Type) -> ir.Type:
    ptr = t.element
    assert isinstance(ptr, T.PointerType), f"expected a pointer type, got {t}"
    return storage_type(ptr.pointee)


def _offset_terms(ctx: LoweringContext, v: Value, depth: int = 0) -> list:
    """The lowered addends of an offset built by `arith.addi` (tiles or scalars), else the offset itself."""
    owner = v.owner
    if depth < 4 and isinstance(owner, O.AddI):
        return [t for x in owner.operands for t in _offset_terms(ctx, x, depth + 1)]
    return [ctx.get(v)]


@RULES.register(O.AddPtr)
def lower_addptr(ctx: LoweringContext, op: O.AddPtr) -> None:
    """`ptr + (a + b)` becomes `(ptr + a) + b`, each term widened on its own.

    Widening the i32 sum would hide that the address is affine in the tile index (sext of a possibly wrapping add),
    and LLVM would then gather element by element; with the terms apart, a row of a tile is a contiguous vector
    access. The two agree unless the i32 offset itself overflows, which Triton's own contiguity analysis also
    assumes it does not (offsets past 2^31 elements need int64 arithmetic in the kernel on every backend).
    """
    st = pointee_storage(op.ptr.type)
    terms = _offset_terms(ctx, op.offset)
    if len(terms) == 1:

        def f(p: ir.Value, off: ir.Value) -> ir.Value:
            b = ctx.b
            if off.type != I64:
                off = b.sext(off, I64)
            return b.gep(p, [off], source_etype=st)

        lift(ctx, op, f)
        return
    ptr = ctx.get(op.ptr)

    def at(x, idx: list[ir.Value]) -> ir.Value:
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        p = at(ptr, idx)
        for t in terms:
            off = at(t, idx)
            p = b.gep(p, [off if off.type == I64 else b.sext(off, I64)], source_etype=st)
        return p

    if not op.result.type.is_tensor:
        ctx.define(op.result, gen(ctx.b, []))
        return
    cost = len(terms) + sum(x.cost for x in (ptr, *terms) if isinstance(x, Tile) and x.buf is None)
    ctx.define(op.result, Tile(op.result.type.shape, PTR, gen=gen, cost=cost))


def _load_one(
    ctx: LoweringContext, ptr: ir.Value, st: ir.Type, ety: ir.Type, mask: ir.Value | None, other: ir.Value | None
) -> ir.Value:
    b = ctx.b

    def do_load() -> ir.Value:
        v = b.load(ptr, typ=st)
        return b.icmp_unsigned("!=", v, ir.Constant(st, 0)) if ety == I1 else v

    return ctx.guarded(mask, ety, do_load, other, "ld")


#: cost of a deferred load in a generator: a generator reading it that is used twice gets stored
LOAD_COST = 8


@RULES.register(O.Load)
def lower_load(ctx: LoweringContext, op: O.Load) -> None:
    res = op.result
    ety = llvm_type(res.type)
    st = pointee_storage(op.ptr.type)
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    if not res.type.is_tensor:
        ctx.define(res, _load_one(ctx, ptr, st, ety, mask, other))
        return

    def elem(x, idx: list[ir.Value]) -> ir.Value | None:
        if x is None:
            return None
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    if isinstance(load_sink(op), O.Store):
        # read in the store's loop (vector add: one loop, no buffers); the guard's branch stays inside that loop
        def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
            return _load_one(ctx, elem(ptr, idx), st, ety, elem(mask, idx), elem(other, idx))

        ctx.define(res, Tile(res.type.shape, ety, gen=gen, cost=LOAD_COST))
        return
    out = ctx.new_buffer_tile(res.type.shape, ety, "ld")

    def body(idx: list[ir.Value]) -> None:
        v = _load_one(ctx, elem(ptr, idx), st, ety, elem(mask, idx), elem(other, idx))
        ctx.store_element(out, idx, v)

    ctx.loop_nest(res.type.shape, body)
    ctx.define(res, out)


@RULES.register(O.Store)
def lower_store(ctx: LoweringContext, op: O.Store) -> None:
    st = pointee_storage(op.ptr.type)
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None

    def store_one(p: ir.Value, v: ir.Value, m: ir.Value | None) -> None:
        b = ctx.b
        if v.type == I1:
            v = b.zext(v, st)
        if m is None:
            b.store(v, p)
        else:
            with b.if_then(m):
                b.store(v, p)

    if not op.ptr.type.is_tensor:
        store_one(ptr, val, mask)
        return

    def elem(x, idx: list[ir.Value]) -> ir.Value | None:
        if x is None:
            return None
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    ctx.loop_nest(op.ptr.type.shape, lambda idx: store_one(elem(ptr, idx), elem(val, idx), elem(mask, idx)))
