"""Declared fields of an op class: operands, results, successors and attributes, each a typed descriptor.

An op class states its structure once, as class-level fields (the model is xDSL's `irdl_op_definition`):

    class Load(Op):
        name = "tt.load"
        ptr = Operand()
        mask = OptOperand()
        other = OptOperand()
        result = Result()
        padding = EnumProp(PaddingOption)
        assembly_format = "$ptr (, $mask)? ..."

The reader, printer and verifier ask these declarations (`Op.operand_defs`, `Op.attr_defs`, ...) instead of keeping
tables keyed by op name. Operands stay one flat list (`op.operands`); a field is a view of its segment. Segment sizes
are exact where the op was read or built with them (`Op.segment_sizes`), else inferred from the operand count.
"""

from __future__ import annotations

import enum
from typing import Any

from .attrs import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from .enums import EnumAttr, enum_from_code
from .types import IntType

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"


class OperandDef:
    """One operand segment: exactly one value, an optional one (`None` when absent) or a variadic list."""

    kind = SINGLE

    def __init__(self, doc: str = "") -> None:
        self.doc = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, op: Any, owner: type | None = None) -> Any:
        if op is None:
            return self
        vals = op.operand_group(self.name)
        if self.kind == VARIADIC:
            return vals
        if self.kind == OPTIONAL:
            return vals[0] if vals else None
        return vals[0]


class Operand(OperandDef):
    kind = SINGLE


class OptOperand(OperandDef):
    kind = OPTIONAL


class VarOperand(OperandDef):
    kind = VARIADIC


class ResultDef(OperandDef):
    """A result (`Result`) or the variadic rest of them (`VarResult`, declared last)."""

    def __get__(self, op: Any, owner: type | None = None) -> Any:
        if op is None:
            return self
        i = op.result_index[self.name]
        return op.results[i:] if self.kind == VARIADIC else op.results[i]


class Result(ResultDef):
    kind = SINGLE


class VarResult(ResultDef):
    kind = VARIADIC


class Successor(ResultDef):
    """A successor block of a terminator (`cf.br`, `cf.cond_br`)."""

    def __get__(self, op: Any, owner: type | None = None) -> Any:
        if op is None:
            return self
        return op.successors[op.successor_index[self.name]]


class PropDef:
    """An inherent attribute: `op.<field>` reads it as a Python value (or `default`), assignment stores it.

    `key` is the MLIR attribute name (defaults to the field name); `required` ones are checked by the verifier.
    Subclasses say how the Python value maps to an `Attribute` and how the attribute is spelled inside custom syntax.
    """

    #: the attribute classes a well-formed op may hold under this name
    accepts: tuple[type, ...] = ()

    def __init__(self, key: str = "", *, default: Any = None, required: bool = False, doc: str = "") -> None:
        self.key = key
        self.default = default
        self.required = required
        self.doc = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.key = self.key or name

    def __get__(self, op: Any, owner: type | None = None) -> Any:
        if op is None:
            return self
        a = op.attrs.get(self.key)
        if a is None:
            if self.required:
                raise KeyError(f"{op.op_name} has no attribute {self.key!r}")
            return self.default
        return self.to_python(a)

    def __set__(self, op: Any, value: Any) -> None:
        if value is None:
            op.attrs.pop(self.key, None)
        else:
            op.attrs[self.key] = value if isinstance(value, self.accepts or (object,)) else self.to_attr(value)

    def to_python(self, a: Attribute) -> Any:
        return a

    def to_attr(self, v: Any) -> Attribute:
        return v

    def normalize(self, a: Attribute) -> Attribute:
        """The stored form of an attribute read in any spelling (enum codes become `EnumAttr`)."""
        return a

    # Custom-syntax spelling (used by `syntax.Format`): read the value at the parser's position / print it.
    def parse(self, p: Any) -> Attribute:
        return p.attribute()

    def print(self, w: Any, a: Attribute) -> str | None:
        return w.attr(a)


class AnyProp(PropDef):
    """Any attribute, kept as is (`value` of arith.constant, `cachePolicy`, ...)."""


class IntProp(PropDef):
    accepts = (IntegerAttr, BoolAttr)

    def to_python(self, a: Attribute) -> int:
        if isinstance(a, (IntegerAttr, BoolAttr)):
            return int(a.value)
        raise TypeError(f"attribute {self.key} is {a!r}, not an integer")

    def to_attr(self, v: int) -> Attribute:
        return IntegerAttr(int(v), IntType(32))


class FlagProp(PropDef):
    """A flag: present (`UnitAttr`, or `true`) or absent. In custom syntax its keyword alone says it is set."""

    accepts = (UnitAttr, BoolAttr, IntegerAttr)

    def __init__(self, key: str = "", **kw: Any) -> None:
        super().__init__(key, default=False, **kw)

    def to_python(self, a: Attribute) -> bool:
        return bool(a.value) if isinstance(a, (BoolAttr, IntegerAttr)) else True

    def to_attr(self, v: bool) -> Attribute:
        return UnitAttr()

    def __set__(self, op: Any, value: Any) -> None:
        super().__set__(op, value if value else None)

    def parse(self, p: Any) -> Attribute:
        return UnitAttr()

    def print(self, w: Any, a: Attribute) -> str | None:
        return "" if isinstance(a, UnitAttr) else None


class BoolProp(PropDef):
    accepts = (BoolAttr, IntegerAttr, UnitAttr)

    def __init__(self, key: str = "", **kw: Any) -> None:
        super().__init__(key, default=kw.pop("default", False), **kw)

    def to_python(self, a: Attribute) -> bool:
        return bool(a.value) if isinstance(a, (BoolAttr, IntegerAttr)) else True

    def to_attr(self, v: bool) -> Attribute:
        return BoolAttr(bool(v))


class StrProp(PropDef):
    """A string; in custom syntax a quoted string (`tt.print " x: "`)."""

    accepts = (StringAttr,)

    def __init__(self, key: str = "", **kw: Any) -> None:
        super().__init__(key, default=kw.pop("default", ""), **kw)

    def to_python(self, a: Attribute) -> str:
        return a.value if isinstance(a, StringAttr) else str(a)

    def to_attr(self, v: str) -> Attribute:
        return StringAttr(v)

    def parse(self, p: Any) -> Attribute:
        return StringAttr(p.string())

    def print(self, w: Any, a: Attribute) -> str | None:
        return w.string(a.value) if isinstance(a, StringAttr) else None


class KeywordProp(StrProp):
    """A bare keyword in custom syntax (`lhs = e4m3`); stored as `StringAttr`, or `OpaqueAttr` with `opaque`."""

    accepts = (StringAttr, OpaqueAttr)

    def __init__(self, key: str = "", *, opaque: bool = False, **kw: Any) -> None:
        super().__init__(key, **kw)
        self.opaque = opaque

    def to_python(self, a: Attribute) -> str:
        return a.text if isinstance(a, OpaqueAttr) else super().to_python(a)

    def to_attr(self, v: str) -> Attribute:
        return OpaqueAttr(v) if self.opaque else StringAttr(v)

    def parse(self, p: Any) -> Attribute:
        return self.to_attr(p.keyword())

    def print(self, w: Any, a: Attribute) -> str | None:
        return a.text if isinstance(a, OpaqueAttr) else a.value if isinstance(a, StringAttr) else None


class SymbolProp(PropDef):
    """`@name`: a reference to a function of the module (the verifier checks that it exists)."""

    accepts = (SymbolRefAttr,)

    def to_python(self, a: Attribute) -> str:
        return a.name if isinstance(a, SymbolRefAttr) else str(a)

    def to_attr(self, v: str) -> Attribute:
        return SymbolRefAttr(v)

    def parse(self, p: Any) -> Attribute:
        return SymbolRefAttr(p.symbol())


class TypeProp(PropDef):
    accepts = (TypeAttr,)

    def to_python(self, a: Attribute) -> Any:
        return a.type if isinstance(a, TypeAttr) else a

    def to_attr(self, v: Any) -> Attribute:
        return TypeAttr(v)


class ArrayProp(PropDef):
    """`array<i32: 1, 0>` read as a tuple of ints."""

    accepts = (DenseArrayAttr,)

    def to_python(self, a: Attribute) -> tuple[int, ...]:
        return a.values if isinstance(a, DenseArrayAttr) else ()

    def to_attr(self, v: Any) -> Attribute:
        return DenseArrayAttr(IntType(32), tuple(v))


class ListProp(PropDef):
    accepts = (ArrayAttr,)


class EnumProp(PropDef):
    """An enum: stored as `EnumAttr` whichever spelling was read (a keyword in custom syntax, an integer code in the
    generic form or an attr-dict, see `enums.ENUM_CODES`); `op.<field>` gives the enum member."""

    accepts = (EnumAttr,)

    def __init__(self, enum_cls: type[enum.Enum], key: str = "", **kw: Any) -> None:
        super().__init__(key, **kw)
        self.enum = enum_cls

    def to_python(self, a: Attribute) -> Any:
        if not isinstance(a, EnumAttr):
            raise TypeError(f"attribute {self.key} is {a!r}, not a {self.enum.__name__}")
        return a.value

    def to_attr(self, v: enum.Enum) -> Attribute:
        return EnumAttr(self.enum(v))

    def normalize(self, a: Attribute) -> Attribute:
        if isinstance(a, IntegerAttr):
            member = enum_from_code(self.enum, a.value)
            if member is not None:
                return EnumAttr(member)
        return a

    def parse(self, p: Any) -> Attribute:
        pos = p._skip()
        word = p.keyword()
        try:
            return EnumAttr(self.enum(word))
        except ValueError:
            raise p.error(f"{word!r} is not a {self.enum.__name__}", pos) from None

    def print(self, w: Any, a: Attribute) -> str | None:
        return a.value.value if isinstance(a, EnumAttr) and isinstance(a.value, self.enum) else None


class FastMathProp(PropDef):
    """`fastmath<fast>` of arith ops, kept as `OpaqueAttr("#arith.fastmath<fast>")`."""

    accepts = (OpaqueAttr,)
    _PREFIX = "#arith.fastmath"

    def parse(self, p: Any) -> Attribute:
        return OpaqueAttr(self._PREFIX + p.balanced())

    def print(self, w: Any, a: Attribute) -> str | None:
        if isinstance(a, OpaqueAttr) and a.text.startswith(self._PREFIX + "<"):
            return a.text[len(self._PREFIX) :]
        return None


class ConstantProp(PropDef):
    """`arith.constant`'s value: a typed literal (`1.5 : f32`, `dense<...> : tensor<...>`, `true`)."""

    accepts = (IntegerAttr, FloatAttr, DenseAttr)

    def parse(self, p: Any) -> Attribute:
        value = p.attribute()
        if isinstance(value, BoolAttr):
            return IntegerAttr(int(value.value), IntType(1))
        if not isinstance(value, self.accepts):
            raise p.error("unsupported constant value")
        return value

    def print(self, w: Any, a: Attribute) -> str | None:
        if isinstance(a, IntegerAttr) and isinstance(a.type, IntType) and a.type.width == 1:
            return "true" if a.value else "false"
        return w.attr(a) if isinstance(a, self.accepts) else None


# ---------------------------------------------------------------------------------------------------------------------


def collect(cls: type) -> None:
    """Gather the fields of `cls` and its bases (base fields first, in declaration order) onto the class."""
    found: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        for k, v in vars(base).items():
            if isinstance(v, (OperandDef, PropDef)):
                found.pop(k, None)
                found[k] = v
            elif k in found:  # a subclass shadows an inherited field (`src = None`, a property of that name)
                del found[k]
    operands = tuple(v for v in found.values() if type(v) in (Operand, OptOperand, VarOperand))
    results = tuple(v for v in found.values() if isinstance(v, (Result, VarResult)))
    successors = tuple(v for v in found.values() if isinstance(v, Successor))
    cls.operand_defs = operands
    cls.operand_index = {d.name: i for i, d in enumerate(operands)}
    cls.fixed_operands = all(d.kind == SINGLE for d in operands)
    cls.result_defs = results
    cls.result_index = {d.name: i for i, d in enumerate(results)}
    cls.successor_defs = successors
    cls.successor_index = {d.name: i for i, d in enumerate(successors)}
    cls.attr_defs = {v.key: v for v in found.values() if isinstance(v, PropDef)}
    cls.normalized_attrs = tuple((k, d) for k, d in cls.attr_defs.items() if type(d).normalize is not PropDef.normalize)
    fixed = sum(d.kind == SINGLE for d in operands)
    most = None if any(d.kind == VARIADIC for d in operands) else len(operands)
    cls.operand_arity = (fixed, most)


def infer_segments(defs: tuple[OperandDef, ...], n: int) -> list[int]:
    """Segment sizes for `n` operands when none were recorded: optional segments are filled in declaration order,
    variadic ones share what is left equally (`tt.make_tensor_descriptor`'s shape and strides)."""
    sizes = [1 if d.kind == SINGLE else 0 for d in defs]
    extra = n - sum(sizes)
    var = [i for i, d in enumerate(defs) if d.kind == VARIADIC]
    for i, d in enumerate(defs):
        if d.kind == OPTIONAL and extra > 0:
            sizes[i] = 1
            extra -= 1
    for k, i in enumerate(var):
        share = extra // (len(var) - k) if k < len(var) - 1 else extra
        sizes[i] = max(share, 0)
        extra -= sizes[i]
    return sizes
