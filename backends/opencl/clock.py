"""Device clocks at run time: which clock a device has (a descriptor feature), and the scale of a cycle counter.

NVIDIA's OpenCL takes inline PTX, whose `%globaltimer` counts nanoseconds. PoCL's CPU device compiles with clang,
whose `__builtin_readcyclecounter()` is the TSC on x86-64; only where the TSC runs at a constant rate (Linux's
`constant_tsc` flag) do its cycles convert to time with one factor. That factor is measured once per process and
device: a kernel reads the counter, the host sleeps, a kernel reads it again, and the host's monotonic clock around
the two launches gives nanoseconds per cycle. A reading is placed at the middle of its launch, so its error is at
most half the launch; of a few launches at each end the shortest is kept (a busy host delays some by milliseconds). The launcher passes it to kernels that read the counter
(render/clock.py); it is never compiled in, so a program binary is the same in every process.
"""

from __future__ import annotations

import functools
import platform
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from triton_backend_sdk.errors import ToolError

from .render.language import CLOCK_CYCLE_COUNTER, CLOCK_GLOBALTIMER, OPENCL

#: host sleep between the two ends of a calibration: with launches of ~0.1 ms on PoCL, the factor is within ~0.5%
CALIBRATION_S = 0.02
#: launches at each end of a calibration, the shortest kept
READINGS = 5
_SCALES: dict[int, np.uint64] = {}
_LOCK = threading.Lock()


@functools.cache
def _constant_tsc() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return False
    return any(line.startswith("flags") and "constant_tsc" in line.split() for line in cpuinfo.open())


def clock_features(dev: Any, cpu: bool, pocl: bool) -> set[str]:
    """The clock feature of device `dev` (a CPU device: `cpu`; PoCL's: `pocl`), or none."""
    if "NVIDIA" in dev.platform.name.upper():
        return {CLOCK_GLOBALTIMER}
    if pocl and cpu and platform.machine().lower() in ("x86_64", "amd64") and _constant_tsc():
        return {CLOCK_CYCLE_COUNTER}
    return set()


def _reader(rt: Any) -> Any:
    import pyopencl as cl

    clock = OPENCL.clock(frozenset({CLOCK_CYCLE_COUNTER}))
    assert clock is not None
    src = f"__kernel void tb_read_clock(__global ulong *out) {{ ulong t; {clock.read.format(out='t')} out[0] = t; }}"
    from .runtime import built

    return cl.Kernel(built(cl.Program(rt.context, src), devices=[rt.device]), "tb_read_clock")


def _reading(rt: Any, kernel: Any, buf: Any) -> tuple[int, float, int]:
    """(counter, host monotonic ns at the middle of the launch that read it, the launch's length in ns)."""
    import pyopencl as cl

    host = np.zeros(1, dtype=np.uint64)
    before = time.perf_counter_ns()
    cl.enqueue_nd_range_kernel(rt.queue, kernel, (1,), (1,)).wait()
    after = time.perf_counter_ns()
    cl.enqueue_copy(rt.queue, host, buf, is_blocking=True)
    return int(host[0]), (before + after) / 2, after - before


def _best_reading(rt: Any, kernel: Any, buf: Any) -> tuple[int, float]:
    counter, mid, _ = min((_reading(rt, kernel, buf) for _ in range(READINGS)), key=lambda r: r[2])
    return counter, mid


def cycle_scale(rt: Any) -> np.uint64:
    """Nanoseconds per cycle of the device's counter × 2^32 (render/clock.py's SCALE), measured on first use."""
    scale = _SCALES.get(id(rt))
    if scale is not None:
        return scale
    import pyopencl as cl

    with _LOCK, rt.lock:
        scale = _SCALES.get(id(rt))
        if scale is not None:
            return scale
        kernel = _reader(rt)
        buf = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 8)
        kernel.set_args(buf)
        _reading(rt, kernel, buf)  # first launch: the program is loaded, outside the measurement
        c0, t0 = _best_reading(rt, kernel, buf)
        time.sleep(CALIBRATION_S)
        c1, t1 = _best_reading(rt, kernel, buf)
        if c1 <= c0:
            raise ToolError(f"[opencl] the device's cycle counter did not advance ({c0} -> {c1}) over a host sleep")
        scale = _SCALES[id(rt)] = np.uint64(round((t1 - t0) / (c1 - c0) * 2**32))
    return scale


__all__ = ["CALIBRATION_S", "clock_features", "cycle_scale"]
