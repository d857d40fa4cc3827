"""`import triton` imports every `triton.backends` entry point's compiler and driver modules, so what those import is
paid by every Triton user on the machine. They must load only the SDK's light modules (the base classes, options,
errors), never the IR, the code generators, llvmlite, pyopencl or torch, and never fail. Checked by the modules a
fresh interpreter holds, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

#: everything of ours `import triton` may load: the entry-point modules and what their classes are built from
ALLOWED = {
    "triton_backend_sdk",
    "triton_backend_sdk.backend",
    "triton_backend_sdk.driver",
    "triton_backend_sdk.errors",
    "triton_backend_sdk.launch",
    "triton_backend_sdk.options",
    "triton_backend_sdk.backends",
    "triton_backend_sdk.backends.cpu_ref",
    "triton_backend_sdk.backends.cpu_ref.compiler",
    "triton_backend_sdk.backends.cpu_ref.driver",
    "triton_backend_sdk.backends.opencl",
    "triton_backend_sdk.backends.opencl.compiler",
    "triton_backend_sdk.backends.opencl.driver",
    "triton_backend_sdk.faces",
    "triton_backend_sdk.backends.cpu",
    "triton_backend_sdk.backends.cpu.compiler",
    "triton_backend_sdk.backends.cpu.driver",
}

#: `import triton` with the SDK's entry points left out of Triton's discovery (the interpreter without our package)
_HIDE_OURS = """
import importlib.metadata as md
_entry_points = md.entry_points
class _Without:
    def select(self, **kw):
        return [e for e in _entry_points(**kw) if not e.value.startswith("triton_backend_sdk")]
md.entry_points = lambda **kw: _entry_points(**kw) if kw else _Without()
"""

_PROBE = """
import json, sys
before = set(sys.modules)
{prelude}
import triton
from triton.backends import backends
print(json.dumps({{"modules": sorted(set(sys.modules) - before), "backends": sorted(backends)}}))
"""


def _import_triton(prelude: str = "") -> dict:
    r = subprocess.run(
        [sys.executable, "-c", _PROBE.format(prelude=prelude)], check=False, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_triton_loads_only_the_light_sdk_modules():
    got = _import_triton()
    assert {"cpu_ref", "opencl", "cpu"} <= set(got["backends"]), "entry points not loaded: the check would be vacuous"
    ours = {m for m in got["modules"] if m.startswith("triton_backend_sdk")}
    assert ours - ALLOWED == set(), "import triton must not load these (import them where they are first used)"
    assert not any(m.startswith("triton_backend_sdk.ir") for m in ours)


def test_our_entry_points_add_no_other_module():
    """Beyond our own and standard-library modules, `import triton` with the SDK installed loads exactly what it
    loads without it: no llvmlite, pyopencl, torch or numpy."""
    with_ours = _import_triton()
    without = _import_triton(_HIDE_OURS)
    assert not {"cpu_ref", "opencl", "cpu"} & set(without["backends"])
    added = set(with_ours["modules"]) - set(without["modules"])
    assert {m for m in added if m.split(".")[0] not in {"triton_backend_sdk", *sys.stdlib_module_names}} == set()
    for heavy in ("llvmlite", "pyopencl", "torch", "numpy"):
        assert heavy not in with_ours["modules"] or heavy in without["modules"]


def test_entry_points_register_without_llvmlite_or_pyopencl():
    """Neither backend needs its code generator's library to be registered: `import triton` works where it is
    missing or broken (the error comes at the first compile, naming it)."""
    got = _import_triton("sys.modules.update(llvmlite=None, pyopencl=None)")
    assert {"cpu_ref", "opencl", "cpu"} <= set(got["backends"])
