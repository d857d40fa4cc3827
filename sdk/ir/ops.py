"""Every op class of the SDK IR under one name space (`from triton_backend_sdk.ir import ops as O; O.AddF`).

The classes are declared per dialect in `dialects/` (`arith`, `math`, `tt`, `scf`, `cf`, `misc`); this module
re-exports them with the op families, the registry (`OP_CLASSES`, `register_op`, how plugins add ops) and
`UnknownOp`. Lowering tables and passes dispatch on these classes, never on name strings.
"""

from __future__ import annotations

from .attrs import (  # noqa: F401  (names the old flat module exported)
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
)
from .core import OP_CLASSES, Block, Op, UnknownOp, Value, register_op  # noqa: F401
from .dialects.arith import *
from .dialects.cf import *
from .dialects.math import *
from .dialects.misc import *
from .dialects.scf import *
from .dialects.sdk_math import *
from .dialects.tt import *
from .dialects.tt_memory import *
from .enums import (  # noqa: F401
    CacheModifier,
    CmpFPredicate,
    CmpIPredicate,
    EnumAttr,
    EvictionPolicy,
    InputPrecision,
    MemSemantic,
    MemSyncScope,
    PaddingOption,
    PropagateNan,
    RMWOp,
    RoundingMode,
)
from .types import FunctionType  # noqa: F401
