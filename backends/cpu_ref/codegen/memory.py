"""Pointer arithmetic, loads and stores.

A masked-off lane never touches memory. Where AxisInfo (triton_backend_sdk.analysis.axis_info) proves the last
dimension's pointers consecutive and the mask the same over runs of N elements, a run is one `<N x T>` load or store
under one mask test (none where unmasked), aligned as far as proven; loads read in such a store's loop under the
same mask need no test of their own. Elsewhere loads and stores are guarded per element by a branch, which LLVM's
vectorizer turns into masked vector loads/stores on AVX2/AVX-512.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from math import gcd

from llvmlite import ir
from triton_backend_sdk.analysis.axis_info import axis_info_of
from triton_backend_sdk.analysis.streaming_stores import streaming_programs
from triton_backend_sdk.analysis.tile_model import row_prefetch_distance
from triton_backend_sdk.analysis.uses import dot_operand_in_place, load_sink, mask_implied_by_sink, rereadable
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.ir.core import Value

from .context import LoweringContext, Tile, linear_index
from .elementwise import lift
from .fused_fill import fill_reducing
from .operand_cache import lower_cached_load
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


# ---- runs proven by AxisInfo ----------------------------------------------------------------------------------------

#: the longest run accessed as one vector (a 64-byte line; LLVM splits it into the target's registers)
RUN_BYTES = 64

#: lowered mask tiles known to be true where code is being emitted now (inside a store's run whose test passed)
_TRUE_MASKS: weakref.WeakKeyDictionary[LoweringContext, list[object]] = weakref.WeakKeyDictionary()


@contextmanager
def _mask_known_true(ctx: LoweringContext, mask: object) -> Iterator[None]:
    masks = _TRUE_MASKS.setdefault(ctx, [])
    masks.append(mask)
    try:
        yield
    finally:
        masks.pop()


def _known_true(ctx: LoweringContext, mask: object) -> bool:
    return any(m is mask for m in _TRUE_MASKS.get(ctx, ()))


def _bytes(t: ir.Type) -> int:
    if isinstance(t, ir.IntType):
        return max(1, t.width // 8)
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}.get(type(t), 0)


def _run(op: O.Op, ptr: Value, mask: Value | None, st: ir.Type) -> tuple[int, int]:
    """(N, alignment in bytes) of the runs along the last dimension that AxisInfo proves consecutive with a mask
    the same over each; N = 1 when nothing is proven."""
    info = axis_info_of(op)
    elem = _bytes(st)
    shape = ptr.type.shape
    if info is None or not shape or not elem:
        return 1, elem
    n = min(info.contiguity(ptr), info.mask_constancy(mask), shape[-1], RUN_BYTES // elem)
    n = 1 << (n.bit_length() - 1)
    if n < 2:
        return 1, elem
    return n, max(elem, gcd(info.alignment(ptr), n * elem))


def _run_loop(ctx: LoweringContext, shape: tuple[int, ...], n: int, body) -> None:
    """`body(index of the run's first element)` for every run of n elements along the last dimension."""

    def at(idx: list[ir.Value]) -> None:
        body(idx[:-1] + [ctx.b.mul(idx[-1], ir.Constant(I64, n), flags=["nuw", "nsw"])])

    ctx.loop_nest(shape[:-1] + (shape[-1] // n,), at)


def _shifted(b: ir.IRBuilder, idx: list[ir.Value], k: int) -> list[ir.Value]:
    return idx if k == 0 else idx[:-1] + [b.add(idx[-1], ir.Constant(I64, k), flags=["nuw", "nsw"])]


def _vector_of(b: ir.IRBuilder, vty: ir.VectorType, elems: list[ir.Value]) -> ir.Value:
    v = ir.Constant(vty, None)
    for k, e in enumerate(elems):
        v = b.insert_element(v, e, ir.Constant(ir.IntType(32), k))
    return v


def _run_vectors(ctx: LoweringContext, op: O.Load, st: ir.Type, n: int, align: int):
    """The `<n x T>` value of the run starting at an index: one vector load where its mask (tested once) holds, the
    `other` elements where it does not. Along a long row proven contiguous (`tile_model.row_prefetch_distance`) each
    run first prefetches the address that distance ahead: the hardware streamer alone left softmax's row loads
    waiting on memory (their stalls were the kernel's largest samples)."""
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    vty = ir.VectorType(st, n)
    info = axis_info_of(op)
    shape = op.result.type.shape
    ahead = row_prefetch_distance(_bytes(st), shape[-1], info.contiguity(op.ptr)) if info and shape else None

    def at(x, idx: list[ir.Value]) -> ir.Value:
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    def run(idx: list[ir.Value]) -> ir.Value:
        b = ctx.b
        p0 = at(ptr, idx)
        if ahead is not None and isinstance(ptr, Tile):
            ctx.prefetch(b.gep(p0, [ir.Constant(I64, ahead)], source_etype=st))
        fallback = None
        if mask is not None and other is not None:
            fallback = _vector_of(b, vty, [at(other, _shifted(b, idx, k)) for k in range(n)])
        m0 = at(mask, idx) if mask is not None else None
        return ctx.guarded(m0, vty, lambda: b.load(p0, typ=vty, align=align), fallback, "ldv")

    return run


def _load_runs(ctx: LoweringContext, op: O.Load, out: Tile, st: ir.Type, n: int, align: int) -> None:
    """Fill buffer tile `out` a run at a time (`_run_vectors`)."""
    run = _run_vectors(ctx, op, st, n, align)

    def body(idx: list[ir.Value]) -> None:
        b = ctx.b
        dst = b.gep(out.buf, [linear_index(b, out.shape, idx)], source_etype=st)
        b.store(run(idx), dst, align=min(64, n * _bytes(st)))

    _run_loop(ctx, out.shape, n, body)


def _store_runs(ctx: LoweringContext, op: O.Store, st: ir.Type, n: int, align: int) -> None:
    """Write a run at a time: one `<n x T>` store per run whose mask (tested once) holds; loads read in this loop
    under the same mask are known unmasked inside the run."""
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    vty = ir.VectorType(st, n)
    streaming = op in ctx.streaming_stores and align >= 16
    by_launch = op in ctx.launch_streaming_stores and align >= 16
    ctx.streams |= streaming or by_launch

    def at(x, idx: list[ir.Value]) -> ir.Value:
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    def body(idx: list[ir.Value]) -> None:
        b = ctx.b
        p0 = at(ptr, idx)

        def write() -> None:
            elems = [at(val, _shifted(b, idx, k)) for k in range(n)]
            elems = [b.zext(e, st) if e.type == I1 else e for e in elems]
            st_ = b.store(_vector_of(b, vty, elems), p0, align=align)
            if streaming:
                st_.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))

        if mask is None:
            write()
            return
        with b.if_then(at(mask, idx)), _mask_known_true(ctx, mask):
            write()

    if not by_launch:
        _run_loop(ctx, op.ptr.type.shape, n, body)
        return
    with ctx.b.if_else(_launch_is_large(ctx, op)) as (large, small):
        with large:
            streaming = True
            _run_loop(ctx, op.ptr.type.shape, n, body)
        with small:
            streaming = False
            _run_loop(ctx, op.ptr.type.shape, n, body)


def _launch_is_large(ctx: LoweringContext, op: O.Store) -> ir.Value:
    """An i1: the launch has at least `streaming_programs(op)` programs (it writes LAUNCH_STREAM_BYTES through op)."""
    b = ctx.b
    programs = ir.Constant(I64, 1)
    for g in ctx.num_programs:
        programs = b.mul(programs, b.zext(g, I64))
    return b.icmp_unsigned(">=", programs, ir.Constant(I64, streaming_programs(op)))


#: cost of a deferred load in a generator: a generator reading it that is used twice gets stored
LOAD_COST = 8


def _constant_runs_snapped(op: O.Load, ptr: Tile) -> Tile:
    """`ptr` read at the first index of each run of equal pointers AxisInfo proves along every dimension: a
    per-channel parameter `w_ptr + (x // N) % C` of an elementwise kernel then has one address per run, which LLVM
    computes and loads once and broadcasts, instead of a division, a remainder and a gather per element."""
    info = axis_info_of(op)
    if info is None:
        return ptr
    # the largest power of two dividing both: aligned runs of it lie inside the proven runs of c
    runs = [g & -g for g in (gcd(c, d) for c, d in zip(info[op.ptr].constancy, ptr.shape))]
    if all(r == 1 for r in runs):
        return ptr

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        snapped = [i if r == 1 else b.and_(i, ir.Constant(I64, ~(r - 1))) for i, r in zip(idx, runs)]
        return ptr.element(b, snapped)

    return Tile(ptr.shape, ptr.ety, gen=gen, cost=ptr.cost + 1)


def _unread(op: O.Load):
    """The generator of a load only its fused reductions read (fused_fill.py): nothing evaluates it."""

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        raise AssertionError(f"{op.op_name} was read after its only readers were fused into its fill loop")

    return gen


@dataclass
class InPlaceRead:
    """A load whose only reader is a `tt.dot` that may read the memory itself (`uses.dot_operand_in_place`): lowering
    the load emits nothing; the dot either reads rows through `row_pointer` where `all_true` holds at run time, or
    calls `copy` for the tile as the load would have made it."""

    op: O.Load
    #: every row of the last dimension is one run of consecutive addresses (AxisInfo): element (.., r, k) lies at
    #: row_pointer(.., r) + k
    whole_rows: bool
    #: rows lie consecutive down each column in runs of this many (AxisInfo's contiguity along the second-to-last
    #: dimension: the A of `x.T @ w`): element (.., r0 + i, k) lies at row_pointer(.., r0, k) + i for i below it
    column_run: int = 1

    @property
    def ety(self) -> ir.Type:
        return llvm_type(self.op.result.type)

    def row_pointer(self, ctx: LoweringContext, idx: list[ir.Value]) -> ir.Value:
        """The address of element `idx` (its last index 0 for a row's start)."""
        ptr = ctx.get(self.op.ptr)
        return ptr.element(ctx.b, idx) if isinstance(ptr, Tile) else ptr

    def all_true(self, ctx: LoweringContext) -> ir.Value | None:
        """An i1 that holds where the load's mask is true at every element (tested over the dimensions AxisInfo does
        not prove constant), or None for an unmasked load."""
        op = self.op
        if op.mask is None:
            return None
        mask = ctx.get(op.mask)
        if not isinstance(mask, Tile):
            return mask
        info = axis_info_of(op)
        shape = op.result.type.shape
        const = info[op.mask].constancy if info is not None else (1,) * len(shape)
        tested = tuple(1 if c >= d else d for c, d in zip(const, shape))
        byte = ir.IntType(8)
        flag = ctx.alloca(byte, 1, "all_true")
        ctx.b.store(ir.Constant(byte, 1), flag)

        def body(idx: list[ir.Value]) -> None:
            bit = ctx.b.zext(mask.element(ctx.b, idx), byte)
            ctx.b.store(ctx.b.and_(ctx.b.load(flag, typ=byte), bit), flag)

        ctx.loop_nest(tested, body)
        return ctx.b.icmp_unsigned("!=", ctx.b.load(flag, typ=byte), ir.Constant(byte, 0))

    def copy(self, ctx: LoweringContext) -> Tile:
        """The tile as the load makes it elsewhere: a buffer filled a run at a time (or an element at a time)."""
        res = self.op.result
        out = ctx.new_buffer_tile(res.type.shape, llvm_type(res.type), "ld")
        load_into(ctx, self.op, out)
        return out


def load_into(ctx: LoweringContext, op: O.Load, out: Tile) -> None:
    """Fill buffer tile `out` as `op` loads its tile: a run at a time where AxisInfo proves runs, else an element
    at a time, each under its own mask test."""
    st = pointee_storage(op.ptr.type)
    n, align = _run(op, op.ptr, op.mask, st)
    if n > 1:
        _load_runs(ctx, op, out, st, n, align)
        return
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    _load_elements(ctx, out, st, ctx.get(op.ptr), mask, other)


def _load_elements(ctx: LoweringContext, out: Tile, st: ir.Type, ptr: object, mask: object, other: object) -> None:
    """Fill buffer tile `out` an element at a time, each read under its own mask test."""

    def elem(x, idx: list[ir.Value]) -> ir.Value | None:
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    def body(idx: list[ir.Value]) -> None:
        v = _load_one(ctx, elem(ptr, idx), st, out.ety, elem(mask, idx), elem(other, idx))
        ctx.store_element(out, idx, v)

    ctx.loop_nest(out.shape, body)


#: loads left for their dot to read (`InPlaceRead`), by result value
_IN_PLACE: weakref.WeakKeyDictionary[LoweringContext, dict[Value, InPlaceRead]] = weakref.WeakKeyDictionary()


def in_place_read(ctx: LoweringContext, v: Value) -> InPlaceRead | None:
    """The deferred load whose result is `v`, if its lowering left the reading to the dot."""
    return _IN_PLACE.get(ctx, {}).get(v)


def _defer_to_dot(ctx: LoweringContext, op: O.Load) -> None:
    info = axis_info_of(op)
    shape = op.result.type.shape
    whole = info is not None and len(shape) >= 2 and info.contiguity(op.ptr) >= shape[-1]
    column = min(info.contiguity(op.ptr, -2), shape[-2]) if info is not None and len(shape) >= 2 else 1
    _IN_PLACE.setdefault(ctx, {})[op.result] = InPlaceRead(op, whole, column)

    def unread(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        raise AssertionError(f"{op.op_name} left to its tt.dot was read elsewhere")

    ctx.values[op.result] = Tile(op.result.type.shape, llvm_type(op.result.type), gen=unread, cost=LOAD_COST)


@RULES.register(O.Load)
def lower_load(ctx: LoweringContext, op: O.Load) -> None:
    res = op.result
    ety = llvm_type(res.type)
    st = pointee_storage(op.ptr.type)
    ptr = ctx.get(op.ptr)
    if isinstance(ptr, Tile) and ptr.buf is None:
        ptr = _constant_runs_snapped(op, ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    if not res.type.is_tensor:
        ctx.define(res, _load_one(ctx, ptr, st, ety, mask, other))
        return

    def elem(x, idx: list[ir.Value]) -> ir.Value | None:
        if x is None:
            return None
        return x.element(ctx.b, idx) if isinstance(x, Tile) else x

    spec = ctx.cached_operands.get(op)
    if spec is not None:
        ctx.define(res, lower_cached_load(ctx, op, spec, lambda out: load_into(ctx, op, out)))
        return
    if dot_operand_in_place(op) == 0 and st == ety:
        _defer_to_dot(ctx, op)
        return
    sink = load_sink(op)
    if isinstance(sink, O.Store):
        # read in the store's loop (vector add: one loop, no buffers); the guard's branch stays inside that loop
        # unless the store's run already tested this same mask at this same element
        implied = mask_implied_by_sink(op, sink)

        def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
            m = None if mask is None or (implied and _known_true(ctx, mask)) else elem(mask, idx)
            return _load_one(ctx, elem(ptr, idx), st, ety, m, elem(other, idx))

        ctx.define(res, Tile(res.type.shape, ety, gen=gen, cost=LOAD_COST))
        return
    n, align = _run(op, op.ptr, op.mask, st) if st == ety else (1, 0)
    if n > 1:

        def vectors(lanes: int):
            return _run_vectors(ctx, op, st, lanes, max(_bytes(st), gcd(align, lanes * _bytes(st))))

        # an unmasked row read again where it is used (`uses.rereadable`): its reductions fold it in one
        # walk that stores nothing, and the rest of its readers load it from memory (still in cache) instead of
        # from a stack buffer the size of the whole tile (Inductor's 8-row softmax and norms: 32 KiB per tile)
        reread = op.mask is None and rereadable(op)
        fused, kept = fill_reducing(
            ctx, res, ety, lambda lanes: vectors(lanes) if n % lanes == 0 else None, keep=False if reread else None
        )
        if reread:

            def again(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
                return _load_one(ctx, elem(ptr, idx), st, ety, None, None)

            # bound as it is: a generator read twice would be stored by `define`, the copy this avoids
            ctx.values[res] = Tile(res.type.shape, ety, gen=again, cost=LOAD_COST)
            return
        if fused:
            ctx.define(res, kept if kept is not None else Tile(res.type.shape, ety, gen=_unread(op)))
            return
        out = ctx.new_buffer_tile(res.type.shape, ety, "ld")
        _load_runs(ctx, op, out, st, n, align)
        ctx.define(res, out)
        return
    out = ctx.new_buffer_tile(res.type.shape, ety, "ld")
    _load_elements(ctx, out, st, ptr, mask, other)
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

    n, align = _run(op, op.ptr, op.mask, st)
    if n > 1:
        _store_runs(ctx, op, st, n, align)
        return
    ctx.loop_nest(op.ptr.type.shape, lambda idx: store_one(elem(ptr, idx), elem(val, idx), elem(mask, idx)))
