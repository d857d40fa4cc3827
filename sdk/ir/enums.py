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
