"""cpu_ref's lowering-rule table. Rule modules register into it on import (see `codegen/__init__.py`); a vendor
backend built on cpu_ref derives its own table with `RULES.derive(name)` and overrides or adds rules there."""

from triton_backend_sdk.lowering import RuleTable

RULES = RuleTable("cpu_ref")
