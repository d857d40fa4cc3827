"""triton-backend-sdk: give stock Triton a new backend without forking it.

The public face is loaded lazily so that importing a backend from Triton's entry points stays fast and never pulls
in heavy modules (llvmlite, pyopencl, torch) before they are needed.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
#: version of the contract between the SDK and the backends/plugins built on it
API_VERSION = 1

# Import Triton first: its backend discovery imports our backends' compiler/driver modules, and must complete
# before anything imports one of those modules directly (a half-initialised module has no backend class to find).
import triton  # noqa: F401

_LAZY = {
    "TargetBackend": "backend",
    "CompileState": "backend",
    "TargetDescriptor": "descriptor",
    "Options": "options",
    "SDKDriver": "driver",
    "Pipeline": "pipeline",
    "Stage": "pipeline",
    "IRPass": "pipeline",
    "inject": "pipeline",
    "ir_pass": "pipeline",
    "TritonPass": "pipeline",
    "Plugin": "plugins",
    "PluginError": "plugins",
    "custom_op": "custom_ops",
    "RuleTable": "lowering",
    "SDKError": "errors",
    "LoweringError": "errors",
    "UnsupportedError": "errors",
    "OptionsError": "errors",
    "ToolError": "errors",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'triton_backend_sdk' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)


def backend_class(name: str) -> Any:
    """The `TargetBackend` subclass Triton registered under `name` (entry point group `triton.backends`)."""
    from triton.backends import backends

    if name not in backends:
        raise KeyError(f"no Triton backend named {name!r}; registered: {sorted(backends)}")
    return backends[name].compiler


def target(name: str = "cpu_ref") -> Any:
    """The `GPUTarget` of backend `name` on this machine, for `triton.compile(..., target=target(name))`."""
    cls = backend_class(name)
    if not hasattr(cls, "describe"):
        raise TypeError(f"backend {name!r} is not an SDK backend; build its GPUTarget yourself")
    return cls.describe(None).gpu_target()


def use(name: str) -> Any:
    """Make backend `name` Triton's active driver in this process (what TRITON_DEFAULT_BACKEND does at start-up)."""
    from triton.backends import backends
    from triton.runtime import driver

    if name not in backends:
        raise KeyError(f"no Triton backend named {name!r}; registered: {sorted(backends)}")
    from .driver import activate

    if type(driver.active) is backends[name].driver:
        return driver.active
    return activate(backends[name].driver())
