"""`tt.atomic_load` / `tt.atomic_store` as `tt.atomic_rmw`, for devices that have read-modify-write atomics only.

An atomic load is an `or` with 0 that returns the old value and leaves memory as it was; an atomic store is an
exchange whose old value is dropped. Both keep the op's mask, memory semantics and scope. They run on the integer
view of the element (pointer and value bitcast to the integer of the same width), so a float's bits travel exactly:
no arithmetic touches them (an `fadd` of -0.0 would quiet a signalling NaN on its way back to memory). 8/16-bit
elements become the backend's sub-word read-modify-write (a compare-exchange loop on the containing word where the
device has no narrower atomics).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.core import Module, Op, Value
from ..ir.enums import EnumAttr, RMWOp
from ..ir.types import FloatType, IntType, PointerType, Type
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace, shaped


def _int_view(t: Type) -> IntType:
    e = t.element
    if isinstance(e, IntType):
        return e
    if isinstance(e, FloatType):
        return IntType(e.width)
    raise UnsupportedError("sdk", f"atomic load/store of {e}")


def _as_int_pointer(bld: Builder, ptr: Value, it: IntType) -> Value:
    p = ptr.type.element
    assert isinstance(p, PointerType), f"atomic on {ptr.type}"
    if p.pointee == it:
        return ptr
    return bld.cast(O.TTBitcast, ptr, PointerType(it, p.address_space))


def _rmw(bld: Builder, op: Op, kind: RMWOp, ptr: Value, val: Value, mask: Value | None) -> Value:
    attrs = {"atomic_rmw_op": EnumAttr(kind), **{k: op.attrs[k] for k in ("sem", "scope") if k in op.attrs}}
    operands = [ptr, val] + ([mask] if mask is not None else [])
    return bld.op(O.AtomicRMW, operands, [val.type], attrs).result


def _mask(op: Op, value_operands: int) -> Value | None:
    """The mask operand, if present: after the pointer and `value_operands` values."""
    rest = op.operands[1 + value_operands :]
    return rest[0] if rest else None


def lower_atomic_load(op: Op) -> None:
    bld = Builder(op)
    res_t = op.result.type
    it = _int_view(res_t)
    ptr = _as_int_pointer(bld, op.operands[0], it)
    old = _rmw(bld, op, RMWOp.OR, ptr, bld.const(0, shaped(res_t, it)), _mask(op, 0))
    replace(op, [old if it == res_t.element else bld.cast(O.TTBitcast, old, res_t.element)])


def lower_atomic_store(op: Op) -> None:
    bld = Builder(op)
    value = op.operands[1]
    it = _int_view(value.type)
    ptr = _as_int_pointer(bld, op.operands[0], it)
    bits = value if value.type.element == it else bld.cast(O.TTBitcast, value, it)
    _rmw(bld, op, RMWOp.XCHG, ptr, bits, _mask(op, 1))
    op.erase()


@ir_pass("atomic-load-store")
class AtomicLoadStore:
    """Lowers `tt.atomic_load` (when `load`) and `tt.atomic_store` (when `store`) to `tt.atomic_rmw`."""

    load: bool = True
    store: bool = True

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if self.load and isinstance(op, O.AtomicLoad):
                lower_atomic_load(op)
            elif self.store and isinstance(op, O.AtomicStore):
                lower_atomic_store(op)
