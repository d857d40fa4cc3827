"""What Triton's entry point loads for opencl: its one concrete `DriverBase` subclass.

Never active by default (`default_active` stays False): select it with `TRITON_DEFAULT_BACKEND=opencl` or
`triton_backend_sdk.use("opencl")`. Importing this module does not import pyopencl.
"""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver


class OpenCLDriver(SDKDriver):
    backend_name = "opencl"

    @classmethod
    def compiler_class(cls) -> type:
        from .compiler import OpenCLBackend

        return OpenCLBackend

    def load_binary(self, name: str, kernel: bytes, device: int) -> BinaryModule:
        from .launcher import register
        from .runtime import load_kernel

        loaded = load_kernel(kernel)
        return BinaryModule(loaded, register(loaded))

    def make_launcher(self, src: Any, metadata: Any) -> Any:
        from .launcher import Launcher

        return Launcher(src, metadata)
