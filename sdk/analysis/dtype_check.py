"""The element types a kernel computes with, checked against what its target's descriptor supports.

`TargetDescriptor.supported_dtypes` names dtypes in Triton's spelling (`fp32`, `bf16`, `i8`, ...); SDK IR types are
signless, so an `i8` stands for both int8 and uint8. The check runs on the kernel as Triton hands it over, at the
start of the `sdkir` stage (before any legalization adds types of its own), so a kernel the device cannot run fails
at compile time naming the dtype instead of miscompiling or failing later in a renderer.
"""

from __future__ import annotations

from ..descriptor import TargetDescriptor
from ..errors import UnsupportedDtypeError
from ..ir.core import Location, Module, Value
from ..ir.types import FloatKind, FloatType, IntType, PointerType, Type

#: SDK IR float kinds in the descriptor's spelling (tf32 is an fp32 input precision, not a storage type)
_FLOATS = {
    FloatKind.F16: "fp16",
    FloatKind.BF16: "bf16",
    FloatKind.F32: "fp32",
    FloatKind.TF32: "fp32",
    FloatKind.F64: "fp64",
    FloatKind.F8E4M3FN: "fp8e4nv",
    FloatKind.F8E5M2: "fp8e5",
    FloatKind.F8E4M3B11FNUZ: "fp8e4b15",
    FloatKind.F8E5M2FNUZ: "fp8e5b16",
    FloatKind.F8E4M3FNUZ: "fp8e4b8",
}


def dtype_name(t: Type) -> str | None:
    """The descriptor's name for `t`'s element type (a pointer's pointee), None for types without one (index)."""
    e = t.element
    while isinstance(e, PointerType):
        e = e.pointee.element
    if isinstance(e, IntType):
        return f"i{e.width}"
    if isinstance(e, FloatType):
        return _FLOATS.get(e.kind)
    return None


def _values(module: Module):
    for op in module.walk():
        for r in op.regions:
            for b in r.blocks:
                for a in b.args:
                    yield a, op.loc
        for v in op.results:
            yield v, op.loc


def dtype_names(module: Module) -> set[str]:
    """Every dtype a value of `module` has."""
    return {n for v, _ in _values(module) if (n := dtype_name(v.type)) is not None}


def check_dtypes(module: Module, target: TargetDescriptor) -> None:
    """Raise `UnsupportedDtypeError` for the first value whose dtype `target.supported_dtypes` lacks."""
    for v, loc in _values(module):
        name = dtype_name(v.type)
        if name is not None and name not in target.supported_dtypes:
            raise UnsupportedDtypeError(target.name, name, _where(v, loc), sorted(target.supported_dtypes))


def _where(v: Value, loc: Location | None) -> Location | None:
    return getattr(v, "loc", None) or loc
