"""cpu_ref code generation: SDK IR → LLVM IR through llvmlite, one rule module per op family."""

from . import control, dot, elementwise, memory, reduce_scan, shape  # noqa: F401  (rules register on import)
from .program import lower_module
from .rules import RULES

__all__ = ["RULES", "lower_module"]
