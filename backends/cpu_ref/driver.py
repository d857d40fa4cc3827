"""What Triton's entry point loads for cpu_ref: its one concrete `DriverBase` subclass."""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver
from triton_backend_sdk.launch import arg_kind, expand_descriptors, make_native_launcher, signature_of


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
        native = self._native_launcher(src, metadata)
        if getattr(metadata, "cpu_ref_asserts", False):
            from .asserts import AssertingLauncher

            return AssertingLauncher(native, metadata.name)
        return native

    def _native_launcher(self, src: Any, metadata: Any) -> Any:
        """The static launcher; host TensorDescriptor parameters are expanded as Triton's TTIR pass expands them."""
        names, types = signature_of(src)
        if not any(t.startswith("tensordesc") for t in types):
            return make_native_launcher(src, metadata, self.backend_name)
        from triton_backend_sdk import _native

        from .descriptors import DescriptorLauncher

        names, types, positions = expand_descriptors(names, types)
        native = _native.Launcher([arg_kind(t, self.backend_name) for t in types], names, backend=self.backend_name)
        return DescriptorLauncher(native, positions)
