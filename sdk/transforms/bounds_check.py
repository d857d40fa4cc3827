"""Bounds-checked memory accesses (`check_bounds=True`): every load, store and atomic whose pointers derive from one
pointer argument of the kernel is preceded by a `tt.assert` that each active element lies inside that argument's
tensor, so an out-of-bounds access is reported with its source location and program id instead of reading garbage
or taking the process down.

The bounds come from the tensors passed (sdk/bounds.py): the kernel takes one more, trailing parameter, a table of
two i64 per runtime argument, the byte offsets from the argument's pointer to the start and to the end of its
tensor's storage (a view may reach anywhere in its storage, as on the GPU). Checks are relative to the argument
(`ptr_to_int(p) - ptr_to_int(arg)`), so they hold on devices whose buffers are not host memory. A failing assert
ends the program before the access (both backends' `tt.assert` rules return), so the access itself never runs.

Which argument a pointer derives from is a small dataflow analysis: arguments, `tt.addptr`, shape ops, selects,
pointer bitcasts and the values carried through `scf.for`/`scf.if`/`scf.while`. An access whose pointers may come
from several arguments or from elsewhere (a loaded pointer, `tt.int_to_ptr`, a parameter of a noinline function) is
not checked; each such access is listed in the kernel's metadata and the launcher warns naming them (on every load of the kernel,
from the cache too), so the gap is never silent.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bounds import METADATA_KEY, UNCHECKED_KEY
from ..ir import ops as O
from ..ir.attrs import ArrayAttr, DictAttr, StringAttr, TypeAttr
from ..ir.core import BlockArgument, Module, Op, Value
from ..ir.enums import CmpIPredicate
from ..ir.types import FloatType, FunctionType, IntType, PointerType, TensorType, Type, i1, i32, i64, is_ptr
from ..pipeline import PassContext, ir_pass
from .build import Builder, shaped

#: a root standing for "not one of the kernel's arguments"
_ELSEWHERE = -1

_ACCESSES = (O.Load, O.Store, O.AtomicRMW, O.AtomicCAS, O.AtomicLoad, O.AtomicStore, O.AtomicPoll)


def _element_bytes(t: Type) -> int:
    e = t.element.pointee if isinstance(t.element, PointerType) else t.element
    if isinstance(e, IntType):
        return max(1, e.width // 8)
    if isinstance(e, FloatType):
        return e.width // 8
    return 8  # a pointer


def _what(op: Op) -> str:
    if isinstance(op, O.AtomicRMW):
        kind = op.rmw_op.value
        return "tl.atomic_" + {"fadd": "add", "umax": "max", "umin": "min", "exch": "xchg"}.get(kind, kind)
    names = {O.Load: "tl.load", O.Store: "tl.store", O.AtomicCAS: "tl.atomic_cas", O.AtomicPoll: "tl.atomic_poll"}
    return names.get(type(op), op.op_name)


def pointer_roots(func: O.Func) -> dict[Value, frozenset[int]]:
    """For each pointer value of `func`: the indices of the function arguments it may derive from (`-1`: from
    something else). Monotone unions to a fixed point, so loop-carried pointers get every origin they may have."""
    roots: dict[Value, frozenset[int]] = {}
    for i, a in enumerate(func.args):
        if is_ptr(a.type):
            roots[a] = frozenset({i})

    def of(v: Value) -> frozenset[int]:
        return roots.get(v, frozenset())

    def join(v: Value, more: frozenset[int]) -> bool:
        if not is_ptr(v.type):
            return False
        old = roots.get(v, frozenset())
        if more <= old:
            return False
        roots[v] = old | more
        return True

    def yields(block) -> list[Value]:
        t = block.terminator
        return list(t.operands) if t is not None else []

    changed = True
    while changed:
        changed = False
        for op in func.walk():
            if isinstance(op, O.AddPtr):
                changed |= join(op.result, of(op.ptr))
            elif isinstance(op, (O.ShapeOp, O.Select, O.TTBitcast)):  # a bitcast: a bool store through an i8 pointer
                src = frozenset().union(*(of(v) for v in op.operands if is_ptr(v.type)))
                for r in op.results:
                    changed |= join(r, src)
            elif isinstance(op, O.For):
                ys = yields(op.body)
                for k, (init, arg, res) in enumerate(zip(op.inits, op.body.args[1:], op.results)):
                    src = of(init) | (of(ys[k]) if k < len(ys) else frozenset())
                    changed |= join(arg, src) | join(res, src)
            elif isinstance(op, O.If):
                blocks = [op.then_block] + ([op.else_block] if op.else_block is not None else [])
                for k, res in enumerate(op.results):
                    src = frozenset().union(*(of(yields(b)[k]) for b in blocks if k < len(yields(b))))
                    changed |= join(res, src)
            elif isinstance(op, O.While):
                after_ys, cond = yields(op.after), yields(op.before)[1:]
                for k, (init, arg) in enumerate(zip(op.inits, op.before.args)):
                    changed |= join(arg, of(init) | (of(after_ys[k]) if k < len(after_ys) else frozenset()))
                for k, c in enumerate(cond):
                    if k < len(op.after.args):
                        changed |= join(op.after.args[k], of(c))
                    if k < len(op.results):
                        changed |= join(op.results[k], of(c))
            else:
                for r in op.results:
                    if is_ptr(r.type) and _ELSEWHERE not in of(r):
                        changed |= join(r, frozenset({_ELSEWHERE}))
    return roots


@dataclass
class _Table:
    """The bounds parameter and the per-argument [lo, hi - size] scalars, loaded once at the function's entry."""

    func: O.Func
    param: BlockArgument
    anchor: Op  # the body's first op before the pass: entry values go before it, in the order they are asked for
    loaded: dict[tuple[int, int], tuple[Value, Value, Value]]

    def bounds(self, arg: int, size: int) -> tuple[Value, Value, Value]:
        """(the argument as an integer, its start, its end - `size`) for an access of `size`-byte elements."""
        key = (arg, size)
        if key not in self.loaded:
            b = Builder(self.anchor)
            base = b.make(O.PtrToInt, [self.func.args[arg]], i64)
            lo = self._entry(b, 2 * arg)
            hi = self._entry(b, 2 * arg + 1)
            self.loaded[key] = (base, lo, b.binary(O.SubI, hi, size))
        return self.loaded[key]

    def _entry(self, b: Builder, index: int) -> Value:
        p = b.make(O.AddPtr, [self.param, b.const(index, i32)], self.param.type)
        return b.make(O.Load, [p], i64)


def _add_table_param(func: O.Func) -> BlockArgument:
    ptr = PointerType(i64)
    body = func.body
    arg = BlockArgument(ptr, body, len(body.args), "tb_bounds")
    body.args.append(arg)
    ft = func.function_type
    func.attrs["function_type"] = TypeAttr(FunctionType((*ft.inputs, ptr), ft.results))
    if func.arg_attrs is not None:
        func.attrs["arg_attrs"] = ArrayAttr((*func.arg_attrs.values, DictAttr(())))
    return arg


def _check(op: Op, arg: int, name: str, table: _Table) -> None:
    ptr = op.ptr
    b = Builder(op)
    base, lo, hi = table.bounds(arg, _element_bytes(ptr.type))
    at = b.cast(O.PtrToInt, ptr, i64)
    if isinstance(ptr.type, TensorType):
        base = b.make(O.Splat, [base], ptr.type.with_element(i64))
        lo = b.make(O.Splat, [lo], ptr.type.with_element(i64))
        hi = b.make(O.Splat, [hi], ptr.type.with_element(i64))
    off = b.binary(O.SubI, at, base)
    inside = b.make(
        O.AndI, [b.cmpi(CmpIPredicate.SGE, off, lo), b.cmpi(CmpIPredicate.SLE, off, hi)], shaped(ptr.type, i1)
    )
    mask = getattr(op, "mask", None)
    ok = inside if mask is None else b.make(O.OrI, [inside, b.binary(O.XOrI, mask, 1)], inside.type)
    if "mask" in type(op).operand_index:
        # also masked off, so that the access touches nothing outside the tensor even where a backend's assert
        # went on after a failure
        _and_mask(op, inside if mask is None else b.make(O.AndI, [mask, inside], inside.type))
    message = StringAttr(f"out-of-bounds {_what(op)} through '{name}' (outside its tensor)")
    b.op(O.Assert, [ok], [], {"message": message})


def _and_mask(op: Op, mask: Value) -> None:
    """Make `mask` the access's mask operand (appended where it had none: nothing follows it then)."""
    sizes = op.operand_segments()
    i = type(op).operand_index["mask"]
    if sizes[i]:
        op.set_operand(sum(sizes[:i]), mask)
    else:
        op._add_operand(mask)
        op.segment_sizes = None


def _arg_name(func: O.Func, i: int) -> str:
    a = func.args[i]
    if a.loc is not None and a.loc.name:
        return a.loc.name
    return a.name if a.name and not a.name.startswith("arg") else f"argument {i}"


@ir_pass(name="bounds_check")
class BoundsCheck:
    """Asserts before each access that its elements lie inside the tensor of the argument they derive from."""

    def run(self, module: Module, ctx: PassContext) -> None:
        kernels = [op for op in module.ops if isinstance(op, O.Func) and op.is_public]
        if len(kernels) != 1:
            return
        func = kernels[0]
        n = len(func.args)
        roots = pointer_roots(func)
        table = _Table(func, _add_table_param(func), func.body.ops[0], {})
        unchecked: list[str] = []
        for op in [op for op in func.walk() if isinstance(op, _ACCESSES)]:
            r = roots.get(op.ptr, frozenset({_ELSEWHERE}))
            if len(r) == 1 and _ELSEWHERE not in r:
                (arg,) = r
                _check(op, arg, _arg_name(func, arg), table)
            else:
                unchecked.append(f"{_what(op)} at {op.loc or '<unknown>'}")
        for other in module.ops:
            if isinstance(other, O.Func) and other is not func:
                unchecked += [
                    f"{_what(op)} at {op.loc or '<unknown>'}" for op in other.walk() if isinstance(op, _ACCESSES)
                ]
        ctx.metadata[METADATA_KEY] = n
        ctx.metadata[UNCHECKED_KEY] = unchecked
