"""Custom ops: plugins add elementwise ops to the SDK IR, callable from kernels, lowered per backend.

A kernel reaches a custom op through `tl.core.extern_elementwise` with a symbol in the reserved namespace `tsdk.op.`:
`custom_op(...)` returns the kernel-side function that emits exactly that, and registers an SDK IR op class. The
SDK's first SDK IR pass, `sdk-custom-ops`, replaces each such extern call with an instance of the op class, so that
passes and lowering rules dispatch on a class like on any built-in op. A backend lowers it with the rule the plugin
gave for that backend (`@handle.lowering("cpu_ref")`), or with a rule in its own table; a table derived from
another (`RULES.derive(...)`) inherits the rules given for its parent's backend.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from .errors import UnsupportedError
from .ir.core import Module, Op
from .ir.ops import OP_CLASSES, ElementwiseOp, ExternElementwise, register_op
from .ir.types import Type
from .pipeline import IRPass, PassContext

#: extern symbols in this namespace name custom ops, never C functions
SYMBOL_PREFIX = "tsdk.op."

_NAME = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
_CUSTOM: dict[str, type[CustomOp]] = {}


class CustomOp(ElementwiseOp):
    """Base class of plugin ops. `lowerings` maps a backend name to its rule `(ctx, op) -> None`."""

    pure = True
    #: Triton dtype names of the accepted argument tuples -> result dtype name (a tuple of them: several results);
    #: "*fp32" is a pointer to fp32
    signatures: ClassVar[dict[tuple[str, ...], str | tuple[str, ...]]] = {}
    #: operand positions that are pointers (reached as int64 addresses from kernels; pointers again in SDK IR)
    pointer_operands: ClassVar[tuple[int, ...]] = ()
    num_results: ClassVar[int] = 1
    lowerings: ClassVar[dict[str, Callable[..., Any]]] = {}

    @classmethod
    def symbol(cls, index: int = 0) -> str:
        """The extern symbol a kernel's call carries; an op with several results is one call per result, the
        result's index after `#`, which `sdk-custom-ops` merges back into one op."""
        return SYMBOL_PREFIX + cls.name + (f"#{index}" if cls.num_results > 1 else "")


class CustomOpHandle:
    """What `custom_op` returns: call it inside `@triton.jit` kernels; `.op` is the SDK IR class."""

    def __init__(self, op: type[CustomOp], kernel_fn: Callable[..., Any]) -> None:
        self.op = op
        self.kernel_fn = kernel_fn

    def lowering(self, backend: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the rule that lowers this op on `backend` (and on backends whose tables derive from it)."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.op.lowerings[backend] = fn
            from .plugins import invalidate

            invalidate()
            return fn

        return deco


def custom_op(
    name: str, signatures: dict[tuple[str, ...], str | tuple[str, ...]], *, pure: bool = True, doc: str = ""
) -> Any:
    """Declare op `name` (dotted, e.g. `acme.sqplus1`) taking the given dtype tuples, e.g. `{("fp32",): "fp32"}`;
    a tuple of result dtypes (`{("fp32",): ("fp32", "fp32")}`) declares an op with several results, which kernels
    receive as a tuple (`s, c = acme_sincos(x)`) and rules define with the backends' `lift_each`.

    Memory effects: an argument dtype `"*fp32"` takes a pointer (a tensor of pointers) to fp32, and `pure=False`
    says the op reads or writes memory (or has any other effect): it then runs exactly once per element, at its
    place in the kernel (never moved past a load or store, never dropped when its result is unused), on every
    element of its operands; a kernel that must skip elements passes a mask operand the rule honours.

    Returns a Triton builtin usable in kernels (`acme_sqplus1(x)`) with `.op` (the op class) and `.lowering(backend)`
    attached; it also works as a decorator-free value at module level, as Triton's `libdevice` functions do.
    """
    from triton.language import core

    _check_name(name, "custom", "vendor")
    if not signatures:
        raise ValueError(f"custom op {name!r} needs at least one signature, e.g. {{('fp32',): 'fp32'}}")
    results = {args: (ret,) if isinstance(ret, str) else tuple(ret) for args, ret in signatures.items()}
    counts = {len(r) for r in results.values()}
    if len(counts) != 1 or 0 in counts:
        raise ValueError(f"custom op {name!r}: every signature must give the same number (>= 1) of results")
    if any(r.startswith("*") for ret in results.values() for r in ret):
        raise ValueError(f"custom op {name!r}: results cannot be pointers")
    pointers = {tuple(i for i, a in enumerate(args) if a.startswith("*")) for args in signatures}
    if len(pointers) != 1:
        raise ValueError(f"custom op {name!r}: pointer arguments must be at the same positions in every signature")
    num_results = counts.pop()
    cls = _declare(name, signatures, num_results, pure, doc, {"pointer_operands": pointers.pop()})
    # Triton's extern calls take no pointers: a pointer travels as its int64 address (tt.ptr_to_int), which
    # `sdk-custom-ops` replaces by the pointer itself
    tables = [
        {
            tuple(core.int64 if a.startswith("*") else core.dtype(a) for a in args): (
                cls.symbol(i),
                core.dtype(ret[i]),
            )
            for args, ret in results.items()
        }
        for i in range(num_results)
    ]

    @core.extern
    def kernel_fn(*args: Any, _semantic: Any = None) -> Any:
        args = tuple(_address(cls, i, a, _semantic) for i, a in enumerate(args))
        outs = tuple(core.extern_elementwise("", "", list(args), t, is_pure=pure, _semantic=_semantic) for t in tables)
        return outs[0] if num_results == 1 else outs

    kernel_fn.__name__ = kernel_fn.__qualname__ = name.replace(".", "_")
    kernel_fn.op = cls  # type: ignore[attr-defined]
    handle = CustomOpHandle(cls, kernel_fn)
    kernel_fn.lowering = handle.lowering  # type: ignore[attr-defined]
    kernel_fn.handle = handle  # type: ignore[attr-defined]
    from .plugins import invalidate

    invalidate()
    return kernel_fn


def runs_in_place(v: Any) -> bool:
    """Whether `v` is a result of a custom op with effects (`pure=False`): a backend that evaluates tiles lazily
    must compute it where the op stands, once per element, used or not (the backends' own ops with effects, loads
    and atomics, are handled by their rules)."""
    owner = getattr(v, "owner", None)
    return isinstance(owner, CustomOp) and not owner.pure


def _address(cls: type[CustomOp], i: int, arg: Any, semantic: Any) -> Any:
    """Argument `i` of a kernel's call, a pointer argument as its int64 address (checked against the signatures)."""
    from triton.language import core

    if i not in cls.pointer_operands:
        return arg
    ty = getattr(arg, "type", None)
    elem = getattr(getattr(ty, "scalar", None), "element_ty", None)
    wanted = {args[i][1:] for args in cls.signatures}
    if elem is None or str(elem) not in {str(core.dtype(w)) for w in wanted}:
        raise TypeError(
            f"custom op {cls.name!r}: argument {i} must be a pointer to {' or '.join(sorted(wanted))}, got {ty}"
        )
    return arg.to(core.int64, _semantic=semantic)


def _caller_module(depth: int = 2) -> str:
    import sys

    frame = sys._getframe(depth)
    return str(frame.f_globals.get("__name__", "?"))


def _check_name(name: str, kind: str, namespace: str) -> None:
    """A custom or dialect op's name is dotted and names no built-in op class."""
    if not _NAME.match(name):
        raise ValueError(f"{kind} op name {name!r} must be dotted, like '{namespace}.op'")
    if name in OP_CLASSES and name not in _CUSTOM:
        raise ValueError(f"{kind} op {name!r} collides with the built-in op class {OP_CLASSES[name].__qualname__}")


def _declare(
    name: str,
    signatures: dict[tuple[str, ...], str | tuple[str, ...]],
    num_results: int,
    pure: bool,
    doc: str,
    namespace: dict[str, Any],
) -> type[CustomOp]:
    """Create and register the op class of a custom or dialect op (declared by the module two frames up)."""
    module = _caller_module(3)
    prev = _CUSTOM.get(name)
    if prev is not None and prev.__module__ != module:
        raise ValueError(f"custom op {name!r} is already declared by {prev.__module__}")
    cls_name = "".join(p.capitalize() for p in re.split(r"[._]", name))
    cls = type(
        cls_name,
        (CustomOp,),
        {
            "name": name,
            "signatures": dict(signatures),
            "num_results": num_results,
            "lowerings": {},
            "pure": pure,
            "__doc__": doc or f"custom op {name}",
            "__module__": module,
            **namespace,
        },
    )
    OP_CLASSES.pop(name, None)
    register_op(cls)
    _CUSTOM[name] = cls
    return cls


def dialect_op(
    name: str,
    operands: Sequence[str],
    results: Sequence[str],
    signatures: dict[tuple[str, ...], str | tuple[str, ...]],
    *,
    assembly_format: str | None = None,
    pure: bool = True,
    doc: str = "",
) -> CustomOpHandle:
    """The SDK IR form of an op of an MLIR dialect the SDK does not know: an upstream Triton extension's op (say
    `plugin.magic`, from a library loaded with `Plugin(mlir_libraries=...)`) that reaches the TTIR through the
    plugin's builder functions, its passes or a `.ttir` file. The SDK's reader then parses it where Triton prints
    it (`assembly_format`, MLIR's declarative syntax over the operand and result names, e.g.
    `"$input attr-dict : type($input)"`; None: the generic form) and each backend lowers it with the rule given by
    `.lowering(backend)`, as for a custom op. Such an op is elementwise: operands and results of one shape.
    """
    from .ir.fields import Operand, Result

    _check_name(name, "dialect", "dialect")
    for sig, ret in signatures.items():
        got = (ret,) if isinstance(ret, str) else tuple(ret)
        if len(sig) != len(operands) or len(got) != len(results):
            raise ValueError(
                f"dialect op {name!r}: signature {sig} -> {ret} does not match operands {tuple(operands)} and "
                f"results {tuple(results)}"
            )
    fields: dict[str, Any] = {n: Operand() for n in operands}
    fields.update({n: Result() for n in results})
    names = list(operands)

    def infer_result_types(cls: type[CustomOp], types: dict[str, list[Type]], attrs: dict[str, Any]) -> list[Type]:
        """Result types the syntax does not spell: the signature's, in the operands' shape."""
        args = [types[n][0] for n in names if types.get(n)]
        if len(args) != len(names):
            return []
        return _signature_results(cls, args)

    namespace = {**fields, "assembly_format": assembly_format, "infer_result_types": classmethod(infer_result_types)}
    cls = _declare(name, signatures, len(results), pure, doc, namespace)
    return CustomOpHandle(cls, lambda *a, **k: _not_callable(name))


def _not_callable(name: str) -> Any:
    raise TypeError(
        f"dialect op {name!r} is not called from Python kernels: it reaches the IR through its dialect's builder "
        f"functions, passes or a .ttir file"
    )


def registered() -> dict[str, type[CustomOp]]:
    return dict(_CUSTOM)


def find_lowering(op_cls: type[Op], backends: list[str]) -> Callable[..., Any] | None:
    """The rule a custom op class carries for the first of `backends` that has one (a table's own backend first)."""
    rules = getattr(op_cls, "lowerings", None)
    if not rules:
        return None
    for b in backends:
        if b in rules:
            return rules[b]
    return None


def identity() -> str:
    """Custom ops, their signatures and each lowering's code (sdk/code_identity.py: the lowering's module and what
    it imports, so editing a helper the rule calls recompiles), part of the cache key."""
    from .code_identity import code_identity

    def lowerings(c: type[CustomOp]) -> str:
        return ",".join(f"{b}={code_identity(fn)}" for b, fn in sorted(c.lowerings.items()))

    return ";".join(f"{n}:{sorted(c.signatures.items())}:[{lowerings(c)}]" for n, c in sorted(_CUSTOM.items()))


class MaterializeCustomOps(IRPass):
    """Replace `tt.extern_elementwise` calls into the `tsdk.op.` namespace by the registered op classes."""

    name = "sdk-custom-ops"

    def run(self, module: Module, ctx: PassContext) -> None:
        merged: dict[tuple[int, tuple[int, ...], str], Op] = {}
        for op in list(module.walk()):
            if not isinstance(op, ExternElementwise) or not op.symbol.startswith(SYMBOL_PREFIX):
                continue
            op_name, _, index = op.symbol[len(SYMBOL_PREFIX) :].partition("#")
            cls = _CUSTOM.get(op_name)
            if cls is None:
                raise UnsupportedError(
                    ctx.target.name,
                    f"kernel calls custom op {op_name!r}, which no active plugin "
                    f"declares (declared: {sorted(_CUSTOM) or 'none'})",
                    op.loc,
                )
            self._pointers_back(op, cls)
            if index:
                self._merge(op, cls, int(index), merged)
                continue
            attrs = {k: v for k, v in op.attrs.items() if k not in ("symbol", "libname", "libpath", "pure")}
            new = cls(
                list(op.operands),
                [r.type for r in op.results],
                attrs,
                loc=op.loc,
                result_names=[r.name for r in op.results],
            )
            block = op.parent
            assert block is not None
            block.insert(block.ops.index(op), new)
            for old, res in zip(op.results, new.results):
                old.replace_all_uses_with(res)
            op.erase()

    @staticmethod
    def _pointers_back(call: Op, cls: type[CustomOp]) -> None:
        """A pointer argument reached the call as `tt.ptr_to_int` of the pointer (see `_address`): use the pointer."""
        from .ir.ops import PtrToInt

        for i in cls.pointer_operands:
            v = call.operands[i]
            if not isinstance(v.owner, PtrToInt):
                raise UnsupportedError(
                    "sdk", f"custom op {cls.name!r}: operand {i} is not a pointer's address", call.loc
                )
            call.set_operand(i, v.owner.operands[0])

    @staticmethod
    def _merge(call: Op, cls: type[CustomOp], index: int, merged: dict[tuple[int, tuple[int, ...], str], Op]) -> None:
        """Result `index` of a several-result op: the calls of one op on the same operands in one block become one
        op, placed at the first call (every call has the same operands, so they are defined before it). A result
        whose call Triton removed as dead still exists, unused, with its declared type."""
        block = call.parent
        assert block is not None
        key = (id(block), tuple(id(v) for v in call.operands), cls.name)
        new = merged.get(key)
        if new is None:
            from .ir.reader import parse_type

            like = call.result.type
            elems = [parse_type(_IR_DTYPE.get(r, r)) for r in _result_dtypes(cls, call)]
            types = [like.with_element(e) if like.is_tensor else e for e in elems]
            new = cls(list(call.operands), types, {}, loc=call.loc)
            block.insert(block.ops.index(call), new)
            merged[key] = new
        call.result.replace_all_uses_with(new.results[index])
        call.erase()


#: Triton dtype names -> SDK IR element type spellings
_IR_DTYPE = {
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
    "int1": "i1",
    **{f"{u}int{w}": f"i{w}" for u in ("", "u") for w in (8, 16, 32, 64)},
}


def _ir_dtype(name: str) -> str:
    """The SDK IR spelling of a signature's dtype name (`*fp32`: `!tt.ptr<f32>`)."""
    if name.startswith("*"):
        return f"!tt.ptr<{_IR_DTYPE.get(name[1:], name[1:])}>"
    return _IR_DTYPE.get(name, name)


def _signature_results(cls: type[CustomOp], args: list[Type]) -> list[Type]:
    """The result types the signature matching operand types `args` gives, in the first operand's shape."""
    from .ir.reader import parse_type

    got = tuple(str(t.element) for t in args)
    for sig, ret in cls.signatures.items():
        if tuple(_ir_dtype(a) for a in sig) == got:
            elems = [parse_type(_IR_DTYPE.get(r, r)) for r in ((ret,) if isinstance(ret, str) else ret)]
            return [args[0].with_element(e) if args[0].is_tensor else e for e in elems]
    raise UnsupportedError("sdk", f"op {cls.name!r} has no signature for operands {got} (declared: {cls.signatures})")


def _result_dtypes(cls: type[CustomOp], call: Op) -> tuple[str, ...]:
    """The result dtypes of the signature whose argument types are the call's."""
    got = tuple(str(v.type.element) for v in call.operands)
    for args, ret in cls.signatures.items():
        if tuple(_ir_dtype(a) for a in args) == got:
            return (ret,) if isinstance(ret, str) else tuple(ret)
    raise UnsupportedError("sdk", f"custom op {cls.name!r} has no signature for arguments {got}", call.loc)
