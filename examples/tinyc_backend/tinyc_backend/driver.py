"""What Triton loads for `tinyc`: its one concrete `DriverBase` subclass.

Loading: the stage `so` bytes are written to a private file, `dlopen`ed (ctypes) and unlinked; the library stays
loaded as long as Triton holds the module. Launching: the SDK's native launcher (thread pool, typed and range-checked
arguments, pointer dtypes) runs `tinyc_entry`; a kernel with asserts gets a fresh assert state per launch.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Any

from triton_backend_sdk.driver import BinaryModule, SDKDriver
from triton_backend_sdk.launch import make_native_launcher, signature_of


class TinyCDriver(SDKDriver):
    backend_name = "tinyc"

    @classmethod
    def compiler_class(cls) -> type:
        from .compiler import TinyCBackend

        return TinyCBackend

    def load_binary(self, name: str, kernel: bytes, device: int) -> BinaryModule:
        from .emit import ENTRY

        fd, path = tempfile.mkstemp(prefix=f"tinyc-{name}-", suffix=".so")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(kernel)
            lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
        finally:
            os.unlink(path)
        return BinaryModule(lib, ctypes.cast(getattr(lib, ENTRY), ctypes.c_void_p).value)

    def make_launcher(self, src: Any, metadata: Any) -> Any:
        from triton_backend_sdk.host_asserts import STATE_PARAM, AssertingLauncher

        names, types = signature_of(src)
        if any(t.startswith("tensordesc") for t in types):
            from triton_backend_sdk.errors import UnsupportedError

            raise UnsupportedError("tinyc", "host TensorDescriptor arguments")
        asserts = bool(getattr(metadata, "tinyc_asserts", False))
        launcher = make_native_launcher(names, types, self.backend_name, hidden=(STATE_PARAM,) if asserts else ())
        return AssertingLauncher(launcher, metadata.name, names) if asserts else launcher
