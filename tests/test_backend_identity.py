"""A backend's cache key follows its code: its package's sources and, transitively, what they import from outside
the package (a vendor's helper module or package), so editing a helper recompiles in the next process."""

from __future__ import annotations

import importlib
import textwrap

from triton.backends.compiler import GPUTarget
from triton_backend_sdk.backends.cpu_ref.compiler import host_descriptor

COMPILER = textwrap.dedent("""
    from triton_backend_sdk.backends.cpu_ref import compiler as cpu_ref


    class VendorBackend(cpu_ref.CPURefBackend):
        name = "tsdkvendor"

        def rule_table(self, options):
            import tsdkvendor_helpers  # outside the backend's package

            return super().rule_table(options)
""")


def test_a_helper_outside_the_backend_package_is_in_its_key(tmp_path, monkeypatch):
    helper = tmp_path / "tsdkvendor_helpers.py"
    helper.write_text("SCALE = 1\n")
    pkg = tmp_path / "tsdkvendor_backend"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compiler.py").write_text(COMPILER)
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = importlib.import_module("tsdkvendor_backend.compiler").VendorBackend
    target = GPUTarget("tsdkvendor", host_descriptor().arch, 1)
    before = cls(target).hash()
    assert cls(target).hash() == before, "an unchanged backend keeps its key"
    helper.write_text("SCALE = 2  # edited\n")
    assert cls(target).hash() != before, "editing the helper the backend imports changes its key"
