"""Atomics: `tt.atomic_rmw`, `tt.atomic_cas`, `tt.atomic_load`/`tt.atomic_store` (3.9).

Every element is one LLVM `atomicrmw`/`cmpxchg` on the program's memory, so they are atomic across the launcher's
threads. LLVM expands what x86 has no instruction for (fadd on half/bfloat/float/double, 16-bit operations) into
compare-exchange loops on the containing word. Floats compare-exchange by their bit patterns, as `atom.cas` does.
Masked-off lanes touch nothing and yield the load's `other`-less undefined value (zero here).

Memory order: `sem` maps to the LLVM ordering of the same name; scopes (cta/gpu/sys) all become system scope,
which is stronger than any of them.

Spin locks cannot deadlock: the launcher runs each program to completion on one thread, and a lock is only ever
held by a program that is running (it took the lock), which will release it. What is not supported, as on a GPU
whose grid exceeds what is resident, is waiting for a program that has not started (a grid-wide barrier): the
launcher hands out programs in chunks, so such a program may be queued behind the waiter on the same thread.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.enums import MemSemantic, RMWOp

from .context import LoweringContext, Tile
from .numerics import f32_to_bf16, widen
from .rules import RULES
from .types import BF16, F32, I1, I8, I16, bit_width, is_float_type, llvm_type

_ORDER = {
    MemSemantic.RELAXED: "monotonic",
    MemSemantic.ACQUIRE: "acquire",
    MemSemantic.RELEASE: "release",
    MemSemantic.ACQUIRE_RELEASE: "acq_rel",
}
#: a failed compare-exchange stores nothing, so it cannot have release semantics
_FAIL_ORDER = {"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire"}

_INT_RMW = {
    RMWOp.AND: "and",
    RMWOp.OR: "or",
    RMWOp.XOR: "xor",
    RMWOp.ADD: "add",
    RMWOp.MAX: "max",
    RMWOp.MIN: "min",
    RMWOp.UMAX: "umax",
    RMWOp.UMIN: "umin",
    RMWOp.XCHG: "xchg",
}


def _elem(x: object, b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value | None:
    if x is None:
        return None
    return x.element(b, idx) if isinstance(x, Tile) else x  # type: ignore[union-attr]


def _guarded(ctx: LoweringContext, mask: ir.Value | None, ety: ir.Type, emit: Callable[[], ir.Value]) -> ir.Value:
    """`emit()` where `mask` holds, else zero of `ety`."""
    return ctx.guarded(mask, ety, emit, name="atomic")


def _over_elements(ctx: LoweringContext, op: O.Op, operands: list[object], one: Callable[..., ir.Value]) -> None:
    """Run `one(*elements)` for every element (row-major) and define the op's result from what it returns."""
    res = op.result
    ety = llvm_type(res.type)
    if not res.type.is_tensor:
        ctx.define(res, one(*operands))
        return
    out = ctx.new_buffer_tile(res.type.shape, ety, "atomic")

    def body(idx: list[ir.Value]) -> None:
        ctx.store_element(out, idx, one(*[_elem(x, ctx.b, idx) for x in operands]))

    ctx.loop_nest(res.type.shape, body)
    ctx.define(res, out)


def _storage_int(ty: ir.Type) -> ir.Type:
    return ir.IntType(bit_width(ty)) if is_float_type(ty) else ty


@RULES.register(O.AtomicRMW)
def lower_atomic_rmw(ctx: LoweringContext, op: O.AtomicRMW) -> None:
    kind = op.rmw_op
    order = _ORDER[op.sem]
    ety = llvm_type(op.result.type)
    if kind is RMWOp.FADD:
        if not is_float_type(ety):
            raise UnsupportedError("cpu_ref", f"atomic fadd on {op.result.type.element}", op.loc)
        name = "fadd"
    elif kind in _INT_RMW and (kind is RMWOp.XCHG or not is_float_type(ety)):
        name = _INT_RMW[kind]
    else:
        raise UnsupportedError("cpu_ref", f"atomic {kind.value} on {op.result.type.element}", op.loc)
    if ety == I1:
        raise UnsupportedError("cpu_ref", "atomics on i1", op.loc)

    def one(p: ir.Value, v: ir.Value, m: ir.Value | None = None) -> ir.Value:
        def emit() -> ir.Value:
            b = ctx.b
            if name == "fadd" and ety == BF16:
                return _bf16_fadd(ctx, p, v, order)
            if name == "xchg" and is_float_type(ety):
                it = _storage_int(ety)
                return b.bitcast(b.atomic_rmw("xchg", p, b.bitcast(v, it), order), ety)
            return b.atomic_rmw(name, p, v, order)

        return _guarded(ctx, m, ety, emit)

    operands = [ctx.get(v) for v in op.operands]
    _over_elements(ctx, op, operands, one)


def _bf16_fadd(ctx: LoweringContext, p: ir.Value, v: ir.Value, order: str) -> ir.Value:
    """`atomicrmw fadd bfloat` as our own compare-exchange loop on the i16: the sum in f32, rounded once by the SDK's
    rounding. LLVM's own expansion of it is wrong here: upstream test_tensor_atomic_rmw[shape42-1-1-bfloat16-True]
    (eight bf16 atomic adds of a row sum) left garbage in 4 of the 8 elements, up to 2e38."""
    b = ctx.b
    addend = widen(b, v, F32)
    pre = b.block
    loop = b.append_basic_block("bf16add")
    done = b.append_basic_block("bf16add.done")
    first = b.load_atomic(p, "monotonic", 2, typ=I16)
    b.branch(loop)
    b.position_at_end(loop)
    cur = b.phi(I16)
    cur.add_incoming(first, pre)
    now = widen(b, b.bitcast(cur, BF16), F32)
    new = b.bitcast(f32_to_bf16(b, b.fadd(now, addend)), I16)
    pair = b.cmpxchg(p, cur, new, order, _FAIL_ORDER[order])
    seen = b.extract_value(pair, 0)
    cur.add_incoming(seen, b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return b.bitcast(cur, BF16)


@RULES.register(O.AtomicCAS)
def lower_atomic_cas(ctx: LoweringContext, op: O.AtomicCAS) -> None:
    order = _ORDER[op.sem]
    ety = llvm_type(op.result.type)
    it = _storage_int(ety)

    def one(p: ir.Value, cmp: ir.Value, val: ir.Value) -> ir.Value:
        b = ctx.b
        if it != ety:
            cmp, val = b.bitcast(cmp, it), b.bitcast(val, it)
        pair = b.cmpxchg(p, cmp, val, order, _FAIL_ORDER[order])
        old = b.extract_value(pair, 0)
        return b.bitcast(old, ety) if it != ety else old

    _over_elements(ctx, op, [ctx.get(v) for v in op.operands], one)


@RULES.register(O.AtomicLoad)
def lower_atomic_load(ctx: LoweringContext, op: O.AtomicLoad) -> None:
    ety = llvm_type(op.result.type)
    st = I8 if ety == I1 else ety
    order = _ORDER[op.sem]
    if order in ("release", "acq_rel"):
        order = "acquire"

    def one(p: ir.Value, m: ir.Value | None = None) -> ir.Value:
        def emit() -> ir.Value:
            v = ctx.b.load_atomic(p, order, bit_width(st) // 8, typ=st)
            return ctx.b.trunc(v, I1) if ety == I1 else v

        return _guarded(ctx, m, ety, emit)

    _over_elements(ctx, op, [ctx.get(v) for v in op.operands], one)


@RULES.register(O.AtomicStore)
def lower_atomic_store(ctx: LoweringContext, op: O.AtomicStore) -> None:
    order = _ORDER[op.sem]
    if order in ("acquire", "acq_rel"):
        order = "release"
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None

    def store(v: ir.Value, p: ir.Value) -> None:
        # llvmlite's `store_atomic` asks the pointer for its pointee type, which opaque pointers do not have
        ctx.b._insert(ir.instructions.StoreAtomicInstr(ctx.b.block, v, p, order, bit_width(v.type) // 8))

    def one(p: ir.Value, v: ir.Value, m: ir.Value | None) -> None:
        b = ctx.b
        if v.type == I1:
            v = b.zext(v, I8)
        if m is None:
            store(v, p)
        else:
            with b.if_then(m):
                store(v, p)

    if not op.ptr.type.is_tensor:
        one(ptr, val, mask)
        return
    ctx.loop_nest(
        op.ptr.type.shape, lambda idx: one(_elem(ptr, ctx.b, idx), _elem(val, ctx.b, idx), _elem(mask, ctx.b, idx))
    )
