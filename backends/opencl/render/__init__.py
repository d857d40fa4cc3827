"""SDK IR → OpenCL C. Rule modules register into the tables on import; `render_module` renders one kernel."""

from . import clock, control, debug, dot, elementwise, libm, map_elementwise, memory, reduce_scan, shape  # noqa: F401  (rules register on import)
from .clock import CLOCK_RULES, rules_for
from .language import OPENCL, CStyleLanguage, OpenCLLanguage
from .program import RenderedKernel, render_module
from .rules import CSTYLE_RULES, OPENCL_RULES

__all__ = [
    "CLOCK_RULES",
    "CSTYLE_RULES",
    "OPENCL",
    "OPENCL_RULES",
    "CStyleLanguage",
    "OpenCLLanguage",
    "RenderedKernel",
    "render_module",
    "rules_for",
]
