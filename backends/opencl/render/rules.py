"""The rule tables: shared C-like rules (`CSTYLE_RULES`) and OpenCL's table derived from them (`OPENCL_RULES`).

Rule modules register into these on import (see `render/__init__.py`). Rules that only spell C are in the shared
table; rules that call OpenCL built-ins with no C equivalent (atomics) are registered in the OpenCL table.
"""

from triton_backend_sdk.lowering import RuleTable

CSTYLE_RULES = RuleTable("cstyle")
OPENCL_RULES = CSTYLE_RULES.derive("opencl")
