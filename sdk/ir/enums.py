"""Enumerations carried by TTIR ops; member values are the keywords TTIR prints."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class CmpIPredicate(enum.Enum):
    EQ = "eq"
    NE = "ne"
    SLT = "slt"
    SLE = "sle"
    SGT = "sgt"
    SGE = "sge"
    ULT = "ult"
    ULE = "ule"
    UGT = "ugt"
    UGE = "uge"

    @property
    def unsigned(self) -> bool:
        """Whether the comparison reads its operands as unsigned (eq/ne read them either way)."""
        return self.value.startswith("u")

    @property
    def signed(self) -> bool:
        return self.value.startswith("s")

    @property
    def relation(self) -> str:
        """The relation as C and llvmlite spell it: `==`, `!=`, `<`, `<=`, `>`, `>=`."""
        return {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[self.value[-2:]]


#: the integer encoding MLIR uses for `predicate` in generic form
CMPI_BY_INDEX = list(CmpIPredicate)


class CmpFPredicate(enum.Enum):
    FALSE = "false"
    OEQ = "oeq"
    OGT = "ogt"
    OGE = "oge"
    OLT = "olt"
    OLE = "ole"
    ONE = "one"
    ORD = "ord"
    UEQ = "ueq"
    UGT = "ugt"
    UGE = "uge"
    ULT = "ult"
    ULE = "ule"
    UNE = "une"
    UNO = "uno"
    TRUE = "true"

    @property
    def c_pattern(self) -> str:
        """The predicate in C (and OpenCL C) over `{a}` and `{b}`, `{isnan}` standing for the language's isnan:
        ordered predicates are false on a NaN, unordered ones true, as C's own relational operators give them."""
        return _CMPF_C[self]


_CMPF_C = {
    CmpFPredicate.OEQ: "({a} == {b})",
    CmpFPredicate.OGT: "({a} > {b})",
    CmpFPredicate.OGE: "({a} >= {b})",
    CmpFPredicate.OLT: "({a} < {b})",
    CmpFPredicate.OLE: "({a} <= {b})",
    CmpFPredicate.ONE: "(({a} < {b}) || ({a} > {b}))",
    CmpFPredicate.ORD: "(!{isnan}({a}) && !{isnan}({b}))",
    CmpFPredicate.UEQ: "!(({a} < {b}) || ({a} > {b}))",
    CmpFPredicate.UGT: "!({a} <= {b})",
    CmpFPredicate.UGE: "!({a} < {b})",
    CmpFPredicate.ULT: "!({a} >= {b})",
    CmpFPredicate.ULE: "!({a} > {b})",
    CmpFPredicate.UNE: "({a} != {b})",
    CmpFPredicate.UNO: "({isnan}({a}) || {isnan}({b}))",
    CmpFPredicate.FALSE: "false",
    CmpFPredicate.TRUE: "true",
}

CMPF_BY_INDEX = list(CmpFPredicate)


class ProgramDim(enum.Enum):
    X = "x"
    Y = "y"
    Z = "z"

    @property
    def axis(self) -> int:
        return "xyz".index(self.value)


class RMWOp(enum.Enum):
    AND = "and"
    OR = "or"
    XOR = "xor"
    ADD = "add"
    FADD = "fadd"
    MAX = "max"
    MIN = "min"
    UMAX = "umax"
    UMIN = "umin"
    XCHG = "exch"


class MemSemantic(enum.Enum):
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQUIRE_RELEASE = "acq_rel"


class MemSyncScope(enum.Enum):
    GPU = "gpu"
    CTA = "cta"
    SYSTEM = "sys"


class RoundingMode(enum.Enum):
    RTZ = "rtz"
    RTNE = "rtne"


class PropagateNan(enum.Enum):
    NONE = "none"
    ALL = "all"


class InputPrecision(enum.Enum):
    TF32 = "tf32"
    TF32x3 = "tf32x3"
    IEEE = "ieee"
    BF16x3 = "bf16x3"
    BF16x6 = "bf16x6"


class PaddingOption(enum.Enum):
    PAD_ZERO = "zero"
    PAD_NAN = "nan"


class CacheModifier(enum.Enum):
    NONE = "none"
    CA = "ca"
    CG = "cg"
    WB = "wb"
    CS = "cs"
    WT = "wt"
    CV = "cv"


class EvictionPolicy(enum.Enum):
    NORMAL = "evict_normal"
    EVICT_FIRST = "evict_first"
    EVICT_LAST = "evict_last"


@dataclass(frozen=True)
class EnumAttr:
    """An attribute holding one of the enums above; the printer spells it as the op's syntax wants."""

    value: enum.Enum


def _codes(cls: type[enum.Enum], values: list[int]) -> dict[enum.Enum, int]:
    return dict(zip(cls, values))


#: how each enum is spelled as an integer in the generic form and attr-dicts: (member -> code, integer type)
ENUM_CODES: dict[type[enum.Enum], tuple[dict[enum.Enum, int], str]] = {
    CmpIPredicate: (_codes(CmpIPredicate, list(range(10))), "i64"),
    CmpFPredicate: (_codes(CmpFPredicate, list(range(16))), "i64"),
    ProgramDim: (_codes(ProgramDim, [0, 1, 2]), "i32"),
    RMWOp: (_codes(RMWOp, list(range(1, 11))), "i32"),
    MemSemantic: (_codes(MemSemantic, [1, 2, 3, 4]), "i32"),
    MemSyncScope: (_codes(MemSyncScope, [1, 2, 3]), "i32"),
    RoundingMode: (_codes(RoundingMode, [0, 1]), "i32"),
    PropagateNan: (_codes(PropagateNan, [0, 0xFFFF]), "i32"),
    InputPrecision: (_codes(InputPrecision, [0, 1, 2, 3, 4]), "i32"),
    PaddingOption: (_codes(PaddingOption, [1, 2]), "i32"),
    CacheModifier: (_codes(CacheModifier, list(range(1, 8))), "i32"),
    EvictionPolicy: (_codes(EvictionPolicy, [1, 2, 3]), "i32"),
}
_FROM_CODE = {cls: {v: k for k, v in codes.items()} for cls, (codes, _) in ENUM_CODES.items()}


def enum_from_code(cls: type[enum.Enum], code: int) -> enum.Enum | None:
    """The member of `cls` spelled `code` in the generic form, or None."""
    return _FROM_CODE.get(cls, {}).get(code)
