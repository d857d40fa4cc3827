"""What Triton's entry point loads for cpu_ref: its one concrete `DriverBase` subclass."""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver
from triton_backend_sdk.launch import KIND_PTR, arg_kind, expand_descriptors, make_native_launcher, signature_of


class CPURefDriver(SDKDriver):
    backend_name = "cpu_ref"

    @classmethod
    def compiler_class(cls) -> type:
        from .compiler import CPURefBackend

        return CPURefBackend

    @classmethod
    def default_active(cls) -> bool:
        """cpu_ref is the driver Triton picks on a machine where no GPU driver is active."""
        return True

    def load_binary(self, name: str, kernel: bytes, device: int) -> BinaryModule:
        from .llvm import load_object

        obj = load_object(name, kernel)
        return BinaryModule(obj, obj.function)

    def make_launcher(self, src: Any, metadata: Any) -> Any:
        """The static launcher; host TensorDescriptor parameters are expanded as Triton's TTIR pass expands them, and
        a kernel that may fail an assert takes a per-launch assert state last (asserts.py)."""
        from triton_backend_sdk import _native

        names, types = signature_of(src)
        asserts = bool(getattr(metadata, "cpu_ref_asserts", False))
        descriptors = any(t.startswith("tensordesc") for t in types)
        if not asserts and not descriptors:
            return make_native_launcher(src, metadata, self.backend_name)
        arg_names = names
        positions: set[int] = set()
        if descriptors:
            names, types, positions = expand_descriptors(names, types)
        kinds = [arg_kind(t, self.backend_name) for t in types]
        if asserts:
            from .asserts import STATE_PARAM

            names, kinds = [*names, STATE_PARAM], [*kinds, KIND_PTR]
        launcher = _native.Launcher(kinds, names, backend=self.backend_name)
        if descriptors:
            from .descriptors import DescriptorLauncher

            launcher = DescriptorLauncher(launcher, positions)
        if asserts:
            from .asserts import AssertingLauncher

            launcher = AssertingLauncher(launcher, metadata.name, arg_names)
        return launcher
