"""Raising `tl.device_assert` failures in Python for backends whose kernels run in host memory (cpu_ref, the tinyc
example): a launcher wrapper for kernels that contain `tt.assert`.

Each launch gets its own assert state, a `tsdk_assert_state` struct (layout below: { int32 failed, int32 pid_x,
pid_y, pid_z; const char *message, *location }), passed as the kernel's hidden last argument after its runtime
arguments (cpu_ref: codegen/program.py). A failing program records the launch's first failure there with a
compare-exchange on `failed` and returns (cpu_ref: codegen/debug.py); the entry then starts no further
programs. After the launch this wrapper reads the state and raises `AssertionError` with the message, the kernel
source location and the failing program's id. A state per launch, not per kernel or module, is what keeps
concurrent launches apart: with one shared state a failure was lost when another thread's launch cleared it first,
or raised in a thread whose own launch had not failed. Import-light: ctypes.
"""

from __future__ import annotations

import ctypes
from typing import Any

#: name of the hidden launcher parameter, for the native launcher's messages
STATE_PARAM = "<assert state>"
FIXED = 9  # gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter hook, exit hook


class _State(ctypes.Structure):
    """The assert state's layout (cpu_ref: codegen/debug.py's STATE_TYPE)."""

    _fields_ = [
        ("failed", ctypes.c_int32),
        ("pid_x", ctypes.c_int32),
        ("pid_y", ctypes.c_int32),
        ("pid_z", ctypes.c_int32),
        ("message", ctypes.c_char_p),
        ("location", ctypes.c_char_p),
    ]


class AssertingLauncher:
    """Wraps the native launcher, which was built with one more pointer parameter than the kernel's: same call
    convention, plus a fresh assert state per launch and the check after it."""

    def __init__(self, native: Any, kernel_name: str, arg_names: list[str]) -> None:
        self.native = native
        self.kernel_name = kernel_name
        self.arg_names = arg_names

    def __call__(self, *call_args: Any) -> None:
        if len(call_args) != FIXED + len(self.arg_names):  # the native check would count the hidden parameter
            raise TypeError(
                f"Launcher: expected {len(self.arg_names)} kernel arguments ({', '.join(self.arg_names)}), "
                f"got {len(call_args) - FIXED}"
            )
        st = _State()
        self.native(*call_args, ctypes.addressof(st))
        if st.failed:
            msg = (st.message or b"").decode("utf-8", "replace")
            loc = (st.location or b"").decode("utf-8", "replace")
            pid = (st.pid_x, st.pid_y, st.pid_z)
            raise AssertionError(f"{loc}: {self.kernel_name}: program {pid}: Assertion `{msg}` failed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.native, name)
