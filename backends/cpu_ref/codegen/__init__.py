"""cpu_ref code generation: SDK IR → LLVM IR through llvmlite, one rule module per op family."""

from . import (  # noqa: F401
    atomics,
    clock,
    control,
    convert,
    debug,
    dot,
    elementwise,
    extern,
    gather,
    libm,
    map_elementwise,
    memory,
    reduce_scan,
    shape,
)
from .program import lower_module
from .rules import RULES

__all__ = ["RULES", "lower_module"]
