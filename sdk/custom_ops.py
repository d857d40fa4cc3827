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
from collections.abc import Callable
from typing import Any, ClassVar

from .errors import UnsupportedError
from .ir.core import Module, Op
from .ir.ops import OP_CLASSES, ElementwiseOp, ExternElementwise, register_op
from .pipeline import IRPass, PassContext

#: extern symbols in this namespace name custom ops, never C functions
SYMBOL_PREFIX = "tsdk.op."

_NAME = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
_CUSTOM: dict[str, type[CustomOp]] = {}


class CustomOp(ElementwiseOp):
    """Base class of plugin ops. `lowerings` maps a backend name to its rule `(ctx, op) -> None`."""

    pure = True
    #: Triton dtype names of the accepted argument tuples -> result dtype name (a tuple of them: several results)
    signatures: ClassVar[dict[tuple[str, ...], str | tuple[str, ...]]] = {}
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

    Returns a Triton builtin usable in kernels (`acme_sqplus1(x)`) with `.op` (the op class) and `.lowering(backend)`
    attached; it also works as a decorator-free value at module level, as Triton's `libdevice` functions do.
    """
    from triton.language import core

    if not _NAME.match(name):
        raise ValueError(f"custom op name {name!r} must be dotted, like 'vendor.op' (the vendor names a namespace)")
    if name in OP_CLASSES and name not in _CUSTOM:
        raise ValueError(f"custom op {name!r} collides with the built-in op class {OP_CLASSES[name].__qualname__}")
    if not signatures:
        raise ValueError(f"custom op {name!r} needs at least one signature, e.g. {{('fp32',): 'fp32'}}")
    results = {args: (ret,) if isinstance(ret, str) else tuple(ret) for args, ret in signatures.items()}
    counts = {len(r) for r in results.values()}
    if len(counts) != 1 or 0 in counts:
        raise ValueError(f"custom op {name!r}: every signature must give the same number (>= 1) of results")
    num_results = counts.pop()
    prev = _CUSTOM.get(name)
    if prev is not None and prev.__module__ != _caller_module():
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
            "__module__": _caller_module(),
        },
    )
    OP_CLASSES.pop(name, None)
    register_op(cls)
    _CUSTOM[name] = cls
    tables = [
        {tuple(core.dtype(a) for a in args): (cls.symbol(i), core.dtype(ret[i])) for args, ret in results.items()}
        for i in range(num_results)
    ]

    @core.extern
    def kernel_fn(*args: Any, _semantic: Any = None) -> Any:
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


def _caller_module() -> str:
    import sys

    frame = sys._getframe(2)
    return str(frame.f_globals.get("__name__", "?"))


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


def _result_dtypes(cls: type[CustomOp], call: Op) -> tuple[str, ...]:
    """The result dtypes of the signature whose argument types are the call's."""
    got = tuple(str(v.type.element) for v in call.operands)
    for args, ret in cls.signatures.items():
        if tuple(_IR_DTYPE.get(a, a) for a in args) == got:
            return (ret,) if isinstance(ret, str) else tuple(ret)
    raise UnsupportedError("sdk", f"custom op {cls.name!r} has no signature for arguments {got}", call.loc)
