"""What Triton's entry point loads for cpu_ref: its one concrete `DriverBase` subclass."""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver
from triton_backend_sdk.launch import make_native_launcher


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
        native = make_native_launcher(src, metadata, self.backend_name)
        if getattr(metadata, "cpu_ref_asserts", False):
            from .asserts import AssertingLauncher

            return AssertingLauncher(native, metadata.name)
        return native
