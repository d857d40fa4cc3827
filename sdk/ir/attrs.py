"""Attributes of the SDK IR. Each keeps enough to be printed back exactly as TTIR spells it."""

from __future__ import annotations

from dataclasses import dataclass

from .enums import EnumAttr
from .types import TensorType, Type


@dataclass(frozen=True)
class IntegerAttr:
    """`42 : i32`; `true`/`false` are `IntegerAttr(1/0, i1)` and print as such."""

    value: int
    type: Type


@dataclass(frozen=True)
class FloatAttr:
    """`1.0 : f32`; `value` is a Python float (inf/nan included, decoded from hex spellings)."""

    value: float
    type: Type


@dataclass(frozen=True)
class BoolAttr:
    """A bare `true`/`false` (e.g. `noinline = false`)."""

    value: bool


@dataclass(frozen=True)
class StringAttr:
    value: str


@dataclass(frozen=True)
class UnitAttr:
    """An attribute present without a value (`{tt.divisibility}` style flags)."""


@dataclass(frozen=True)
class TypeAttr:
    type: Type


@dataclass(frozen=True)
class SymbolRefAttr:
    """`@name`."""

    name: str


@dataclass(frozen=True)
class DenseAttr:
    """`dense<...> : tensor<...>`. A splat has one value; otherwise values are in row-major order.

    Values are Python ints for integer element types (as signless bit patterns read back as signed) and Python
    floats for float element types, hex bit patterns already decoded.
    """

    values: tuple[int | float, ...]
    type: TensorType

    @property
    def is_splat(self) -> bool:
        return len(self.values) == 1


@dataclass(frozen=True)
class DenseArrayAttr:
    """`array<i32: 1, 0>`."""

    element: Type
    values: tuple[int, ...]


@dataclass(frozen=True)
class ArrayAttr:
    """`[a, b, ...]`."""

    values: tuple[Attribute, ...]


@dataclass(frozen=True)
class DictAttr:
    """`{name = attr, ...}` (function argument attributes)."""

    entries: tuple[tuple[str, Attribute], ...]

    def get(self, name: str) -> Attribute | None:
        for k, v in self.entries:
            if k == name:
                return v
        return None


@dataclass(frozen=True)
class OpaqueAttr:
    """Any other attribute, kept verbatim (`#tt.cache_policy<...>`, `#arith.fastmath<fast>`, ...)."""

    text: str


Attribute = (
    IntegerAttr
    | FloatAttr
    | BoolAttr
    | StringAttr
    | UnitAttr
    | TypeAttr
    | SymbolRefAttr
    | DenseAttr
    | DenseArrayAttr
    | ArrayAttr
    | DictAttr
    | OpaqueAttr
    | EnumAttr
)
