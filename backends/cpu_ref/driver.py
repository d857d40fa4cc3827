"""What Triton's entry point loads for cpu_ref: its one concrete `DriverBase` subclass."""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver
from triton_backend_sdk.launch import expand_descriptors, make_native_launcher, signature_of


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
        """The static launcher; host TensorDescriptor parameters are expanded as Triton's TTIR pass expands them, a
        bounds-checked kernel takes its bounds table after its arguments (sdk/bounds.py), and a kernel that may fail
        an assert takes a per-launch assert state last (sdk/host_asserts.py)."""
        from triton_backend_sdk.bounds import BOUNDS_PARAM, BOUNDS_TYPE, BoundsLauncher, checked_args
        from triton_backend_sdk.host_asserts import STATE_PARAM

        names, types = signature_of(src)
        asserts = bool(getattr(metadata, "cpu_ref_asserts", False))
        arg_names = names
        positions: set[int] = set()
        if any(t.startswith("tensordesc") for t in types):
            names, types, positions = expand_descriptors(names, types)
        bounds = checked_args(metadata)
        kernel_types = types
        if bounds is not None:
            names, types = [*names, BOUNDS_PARAM], [*types, BOUNDS_TYPE]
        launcher = make_native_launcher(names, types, self.backend_name, hidden=(STATE_PARAM,) if asserts else ())
        if bounds is not None:
            launcher = BoundsLauncher(launcher, kernel_types, bounds, metadata.name)
        if positions:
            from .descriptors import DescriptorLauncher

            launcher = DescriptorLauncher(launcher, positions)
        if asserts:
            from triton_backend_sdk.host_asserts import AssertingLauncher

            launcher = AssertingLauncher(launcher, metadata.name, arg_names)
        return launcher
