"""A device runtime's start-up keeps the process's signal handlers (sdk/signals.py). PoCL's LLVM took SIGSEGV, SIGABRT,
SIGINT and others when its platform was enumerated and its compiler first ran: after that an abort() ended the process
without Python's faulthandler stack, which is how CI lost pytest workers with nothing in their logs."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import uuid

import pytest
from triton_backend_sdk.signals import RUNTIME_OWNED, handlers, kept_signal_handlers

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads glibc's struct sigaction")


def _opencl_or_skip() -> None:
    from triton_backend_sdk.backends.opencl.runtime import selected_device

    try:
        selected_device()
    except Exception as e:  # noqa: BLE001 - no pyopencl, no ICD, no device: cannot run here
        pytest.skip(f"opencl: no usable OpenCL device ({e})")


@linux
def test_kept_signal_handlers_restores_what_native_code_replaced() -> None:
    """A library's C-level sigaction (as PoCL's LLVM does it) is undone; Python's own handler then still runs."""
    libc = ctypes.CDLL(None)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
    seen: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda sig, _frame: seen.append(sig))
    try:
        before = handlers()
        with kept_signal_handlers():
            libc.signal(signal.SIGUSR1, 1)  # SIG_IGN behind Python's back
            libc.signal(signal.SIGUSR2, 1)
            assert handlers()[signal.SIGUSR1] != before[signal.SIGUSR1]
        assert handlers() == before
        os.kill(os.getpid(), signal.SIGUSR1)
        signal.getsignal(signal.SIGUSR1)  # a bytecode boundary: Python runs pending handlers
        assert seen == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)


@linux
def test_opencl_start_and_a_fresh_build_keep_the_handlers() -> None:
    """Device enumeration and a build the driver has never seen (a fresh source defeats its cache) change no handler
    but the runtime's own SIGFPE."""
    before = handlers()
    _opencl_or_skip()
    from triton_backend_sdk.backends.opencl.runtime import build_program, selected_device

    tag = uuid.uuid4().hex[:12]
    build_program(selected_device(), f"__kernel void k_{tag}(__global int *p) {{ p[0] = 1; }}", f"k_{tag}", [])
    after = handlers()
    changed = sorted(signal.Signals(s).name for s in before if after.get(s) != before[s] and s not in RUNTIME_OWNED)
    assert changed == []


_ABORT_AFTER_OPENCL = """
import faulthandler, os, sys, uuid
faulthandler.enable(all_threads=True)
from triton_backend_sdk.backends.opencl.runtime import build_program, selected_device
tag = uuid.uuid4().hex[:12]
build_program(selected_device(), "__kernel void k_%s(__global int *p) { p[0] = 1; }" % tag, "k_" + tag, [])
print("built", flush=True)
os.abort()
"""


@linux
def test_an_abort_after_opencl_start_leaves_a_python_stack() -> None:
    _opencl_or_skip()
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_ABORT_AFTER_OPENCL)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "built" in out.stdout, out.stderr
    assert out.returncode == -signal.SIGABRT, (out.returncode, out.stderr)
    assert "Fatal Python error: Aborted" in out.stderr, out.stderr
    assert "<string>" in out.stderr, out.stderr
