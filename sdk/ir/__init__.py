"""SDK-owned IR for Triton kernels: types, attributes, ops, TTIR reader and printer, verifier.

module = parse_ttir(compiled.asm["ttir"])   # TTIR text (Triton 3.7 or 3.9) -> Module
verify(module)                              # IRVerificationError naming op and location if malformed
text = print_module(module)                 # Module -> TTIR-like text that parse_ttir reads back

Each op is one declared class in `dialects/` (fields, `assembly_format`, `verify_`; see `fields.py`, `syntax.py`),
all re-exported by `ops`; the reader, printer and verifier ask the class. Passes build ops with typed builders
(`ops.AddI.build(a, b)`, `ops.Constant.from_int(0, i64)`) and place them with `rewriter.Rewriter`.
"""

from .attrs import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from .core import Block, BlockArgument, Location, Module, Op, OpResult, Region, Value
from .enums import EnumAttr
from .ops import OP_CLASSES, UnknownOp, register_op
from .types import (
    FloatKind,
    FloatType,
    FunctionType,
    IndexType,
    IntType,
    NoneType,
    OpaqueType,
    PointerType,
    TensorDescType,
    TensorType,
    Type,
)

__all__ = [
    "OP_CLASSES",
    "ArrayAttr",
    "Attribute",
    "Block",
    "BlockArgument",
    "BoolAttr",
    "DenseArrayAttr",
    "DenseAttr",
    "DictAttr",
    "EnumAttr",
    "FloatAttr",
    "FloatKind",
    "FloatType",
    "FunctionType",
    "IRVerificationError",
    "IndexType",
    "IntType",
    "IntegerAttr",
    "Location",
    "Module",
    "NoneType",
    "Op",
    "OpResult",
    "OpaqueAttr",
    "OpaqueType",
    "PointerType",
    "Region",
    "StringAttr",
    "SymbolRefAttr",
    "TTIRParseError",
    "TensorDescType",
    "TensorType",
    "Type",
    "TypeAttr",
    "UnitAttr",
    "UnknownOp",
    "Value",
    "parse_attribute",
    "parse_ttir",
    "parse_type",
    "print_module",
    "print_op",
    "register_op",
    "verify",
]

# The reader, printer and verifier load on first use: Triton imports SDK backends during `import triton`, and
# nothing there needs them until a kernel is compiled.
_LAZY = {
    "print_module": "printer",
    "print_op": "printer",
    "TTIRParseError": "reader",
    "parse_attribute": "reader",
    "parse_ttir": "reader",
    "parse_type": "reader",
    "IRVerificationError": "verifier",
    "verify": "verifier",
}


def __getattr__(name: str) -> object:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
