"""Raising `tl.device_assert` failures in Python: the error buffer a kernel with asserts takes as its last, hidden
parameter (see render/debug.py), and the check after each launch. Also: flushing `tl.device_print` output.

One small device buffer per device runtime, zeroed, shared by its launches (they hold the runtime's lock). It is an
ordinary device buffer read back explicitly, so the same code serves zero-copy devices (PoCL) and discrete ones.
After a launch the launcher reads it; when an assert failed, the buffer is cleared for the next launch and
`AssertionError` names the source location, the kernel, the program id and the message, as cpu_ref's does.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

#: ints in the error buffer: [failed, assert number, pid x, pid y, pid z]
ERR_INTS = 5
_BUFFERS: dict[int, Any] = {}


def error_buffer(rt: Any) -> Any:
    """The runtime's error buffer (made and zeroed on first use)."""
    buf = _BUFFERS.get(id(rt))
    if buf is None:
        import pyopencl as cl

        mf = cl.mem_flags
        buf = cl.Buffer(rt.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(ERR_INTS, dtype=np.int32))
        _BUFFERS[id(rt)] = buf
    return buf


def check(rt: Any, kernel_name: str, table: list[list[str]]) -> None:
    """After a launch (the kernel finished): raise the recorded assert failure, if any, and clear it."""
    import pyopencl as cl

    buf = error_buffer(rt)
    state = np.zeros(ERR_INTS, dtype=np.int32)
    cl.enqueue_copy(rt.queue, state, buf, is_blocking=True)
    if not state[0]:
        return
    cl.enqueue_copy(rt.queue, buf, np.zeros(ERR_INTS, dtype=np.int32), is_blocking=True)
    number = int(state[1])
    msg, loc = table[number] if 0 <= number < len(table) else ("<unknown assert>", "<unknown>")
    pid = tuple(int(p) for p in state[2:5])
    raise AssertionError(f"{loc}: {kernel_name}: program {pid}: Assertion `{msg}` failed")


def flush_prints() -> None:
    """After a kernel that prints has finished: flush the C library's stdout. Some OpenCL drivers write `printf`
    output through C stdio, which is fully buffered when stdout is not a terminal; flushed here, the lines appear
    when the launch returns (as cpu_ref's, written unbuffered) and before later Python output."""
    _libc().fflush(None)


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None)
