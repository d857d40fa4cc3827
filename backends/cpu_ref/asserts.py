"""Raising `tl.device_assert` failures in Python: a launcher wrapper for kernels that contain `tt.assert`.

A failing program records the launch's first failure in its module's assert state and returns (codegen/debug.py);
the entry then starts no further programs. After the launch this wrapper reads the state, clears it for the next
launch and raises `AssertionError` with the message, the kernel source location and the failing program's id. The
state's address comes from the entry's control call (`start == -1`, see codegen/program.py). Import-light: ctypes.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

_lock = threading.Lock()
_ENTRY = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64
)


class _State(ctypes.Structure):
    """Mirror of codegen/debug.py's STATE_TYPE."""

    _fields_ = [
        ("failed", ctypes.c_int32),
        ("pid_x", ctypes.c_int32),
        ("pid_y", ctypes.c_int32),
        ("pid_z", ctypes.c_int32),
        ("message", ctypes.c_char_p),
        ("location", ctypes.c_char_p),
    ]


def _state_of(function: int) -> _State:
    """Ask the entry where its module's assert state lives (the control call)."""
    slot = (ctypes.c_void_p * 1)()
    _ENTRY(function)(ctypes.addressof(slot), 0, 0, 0, -1, -1)
    return _State.from_address(slot[0])


class AssertingLauncher:
    """Wraps the native launcher: same call convention, plus the assert check after each launch."""

    def __init__(self, native: Any, kernel_name: str) -> None:
        self.native = native
        self.kernel_name = kernel_name
        # per launcher, not per entry address: a freed kernel's code address is reused by the next one loaded
        self._function: int | None = None
        self._state: _State | None = None

    def __call__(self, gx: int, gy: int, gz: int, stream: Any, function: int, *rest: Any) -> None:
        with _lock:
            if self._state is None or self._function != int(function):
                self._state, self._function = _state_of(int(function)), int(function)
            st = self._state
        self.native(gx, gy, gz, stream, function, *rest)
        if st.failed:
            msg = (st.message or b"").decode("utf-8", "replace")
            loc = (st.location or b"").decode("utf-8", "replace")
            pid = (st.pid_x, st.pid_y, st.pid_z)
            ctypes.memset(ctypes.addressof(st), 0, ctypes.sizeof(st))
            raise AssertionError(f"{loc}: {self.kernel_name}: program {pid}: Assertion `{msg}` failed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.native, name)
