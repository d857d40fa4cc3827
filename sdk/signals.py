"""Keep the process's signal handlers across a vendor runtime's initialisation.

A device runtime may carry its own LLVM, whose start-up registers handlers for most signals: PoCL does so when its
platform is first enumerated (SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGTRAP, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS). That silently breaks the host process: an `abort()` runs LLVM's handler and then
glibc's default one, so Python's faulthandler never prints (how CI lost pytest workers with no stack); SIGXFSZ,
which Python ignores, kills the process; a SIGINT handler installed with `signal.signal` is replaced until the first
Ctrl-C. Backends wrap the call that initialises their runtime in `kept_signal_handlers()`.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import sys
from collections.abc import Iterator

#: handlers a runtime may keep: PoCL's SIGFPE handler lets a kernel's integer division by zero (undefined in OpenCL C)
#: finish on its worker threads instead of ending the process
RUNTIME_OWNED = (signal.SIGFPE,)


class _SigAction(ctypes.Structure):
    """glibc's `struct sigaction` on Linux (x86-64 and AArch64): handler, 1024-bit mask, flags, restorer."""

    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (1024 // (8 * ctypes.sizeof(ctypes.c_ulong)))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sigaction.argtypes = [ctypes.c_int, ctypes.POINTER(_SigAction), ctypes.POINTER(_SigAction)]
    return libc


def _signals() -> list[int]:
    return [int(s) for s in signal.valid_signals() if 0 < int(s) < signal.SIGRTMIN]


def handlers() -> dict[int, bytes]:
    """Each standard signal's `struct sigaction`, as bytes (empty off Linux)."""
    libc = _libc()
    if libc is None:
        return {}
    out = {}
    for sig in _signals():
        sa = _SigAction()
        if libc.sigaction(sig, None, ctypes.byref(sa)) == 0:
            out[sig] = _normalized(sa)
    return out


_SA_RESTORER = 0x04000000


def _normalized(sa: _SigAction) -> bytes:
    """The action's bytes without what a read does not reproduce: the mask past the kernel's 64 signals (glibc copies
    it from uninitialised stack) and the restorer, which glibc adds to every action it installs."""
    for i in range(1, len(sa.mask)):
        sa.mask[i] = 0
    sa.flags &= ~_SA_RESTORER
    sa.restorer = None
    return bytes(sa)


@contextlib.contextmanager
def kept_signal_handlers(runtime_owned: tuple[int, ...] = RUNTIME_OWNED) -> Iterator[None]:
    """Restore, on exit, every signal handler the body replaced, except those in `runtime_owned`."""
    before = handlers()
    try:
        yield
    finally:
        libc = _libc()
        if libc is not None:
            owned = {int(s) for s in runtime_owned}
            for sig, was in before.items():
                if sig in owned:
                    continue
                now = _SigAction()
                if libc.sigaction(sig, None, ctypes.byref(now)) == 0 and _normalized(now) != was:
                    libc.sigaction(sig, ctypes.byref(_SigAction.from_buffer_copy(was)), None)
