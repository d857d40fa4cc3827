"""What `triton.testing.do_bench` and `triton.autotune` need from an SDK driver to time a host-driven device: a
cache-flush buffer sized to the host's last-level cache, and a flush that costs what its bytes cost.

`do_bench` estimates a kernel's time over five (flush + run) rounds and takes `rep / estimate` samples, so a slow
flush shrinks the sample: a 27 ms flush left 3-4 samples for a 1 ms kernel, and autotune's median of those picked
different winners run to run.
"""

from __future__ import annotations

import ctypes
import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: used where the host does not say (no sysfs cache entries)
DEFAULT_FLUSH_BYTES = 64 * 1024 * 1024


def _size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


@functools.cache
def last_level_cache_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """The largest data or unified cache of CPU 0 (Linux sysfs), or None where the host does not say."""
    best: tuple[int, int] | None = None
    for index in Path(root).glob("index*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            entry = (int((index / "level").read_text()), _size((index / "size").read_text()))
        except (OSError, ValueError):
            continue
        best = entry if best is None or entry > best else best
    return None if best is None else best[1]


#: the most a flush writes: a host whose last-level cache is shared by many more cores than this process sees (a
#: 260 MiB L3 behind 2 vCPUs) made twice that a 520 MiB memset, 50 ms a run, and left do_bench 1-2 samples
MAX_FLUSH_BYTES = 64 * 1024 * 1024


def flush_bytes() -> int:
    """Twice the last-level cache, at most MAX_FLUSH_BYTES: writing it evicts what a previous run left there (on a
    larger shared cache, as much of it as a 2-core share holds)."""
    llc = last_level_cache_bytes()
    return min(2 * llc, MAX_FLUSH_BYTES) if llc else DEFAULT_FLUSH_BYTES


@functools.cache
def flush_buffer() -> Any:
    """One buffer of `flush_bytes()` per process, its pages touched: do_bench asks for the buffer on every call, and
    first-touching 64 MiB (81 ms here) inside its estimate rounds shrank the sample as much as a slow flush."""
    import torch

    buf = torch.empty(flush_bytes(), dtype=torch.uint8)
    clear(buf)
    return buf


def clear(buffer: Any) -> None:
    """Overwrite a contiguous CPU tensor with zeros in one memset."""
    ctypes.memset(buffer.data_ptr(), 0, buffer.numel() * buffer.element_size())


#: samples taken however long a call takes (the median of fewer is one outlier away from another winner)
MIN_SAMPLES = 5
#: sampling goes on past `rep` while the median's 95% interval is wider than this fraction of the median...
TARGET_SPREAD = 0.01
#: ...up to this multiple of `rep`
MAX_REP_FACTOR = 10


def median_interval(times: Sequence[float]) -> tuple[float, float]:
    """A distribution-free 95% confidence interval of the median: the order statistics n/2 -+ 0.98 sqrt(n)."""
    ordered = sorted(times)
    n = len(ordered)
    half = 0.98 * math.sqrt(n)
    return ordered[max(0, math.floor(n / 2 - half))], ordered[min(n - 1, math.ceil(n / 2 + half))]


def settled(times: Sequence[float]) -> bool:
    lo, hi = median_interval(times)
    return len(times) >= MIN_SAMPLES and hi - lo <= TARGET_SPREAD * statistics.median(times)


def quantile(times: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics, as `triton.testing.do_bench` computes its quantiles."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantile {q} is outside [0, 1]")
    ordered = sorted(times)
    point = q * (len(ordered) - 1)
    lower, upper = math.floor(point), math.ceil(point)
    return ordered[lower] + (point - lower) * (ordered[upper] - ordered[lower])


def summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    if quantiles is not None:
        out = [quantile(times, q) for q in quantiles]
        return out[0] if len(out) == 1 else out
    reducers: dict[str, Callable[[list[float]], Any]] = {
        "all": list,
        "min": min,
        "max": max,
        "mean": statistics.mean,
        "median": statistics.median,
    }
    if return_mode not in reducers:
        raise ValueError(f"return_mode {return_mode!r} is not one of {sorted(reducers)}")
    return reducers[return_mode](times)


#: at most this long (seconds) between two configs of one autotuning run, for the second to be timed against the
#: first (each call compiles its config first: cpu_ref's and PoCL's compiles take well under this)
BURST_GAP_S = 30.0


def autotune_run_of(fn: Callable[[], Any]) -> tuple[int, int] | None:
    """(autotuner, run) identity of a config's timing closure: Triton's `Autotuner._bench` hands the benchmarker a
    `kernel_call` closure over the autotuner, whose `nargs` is one dict per autotuning run; None for anything else."""
    if getattr(fn, "__qualname__", "") != "Autotuner._bench.<locals>.kernel_call":
        return None
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    tuner = cells["self"].cell_contents if "self" in cells else None
    nargs = getattr(tuner, "nargs", None)
    return None if tuner is None else (id(tuner), id(nargs))


class _Reference:
    """The first config timed in an autotuning run, and its median then. Kept until the next run's first config
    replaces it: its closure holds that run's arguments (the autotuner's own kernel arguments) alive until then."""

    def __init__(self, run: tuple[int, int], fn: Callable[[], Any], median: float) -> None:
        self.run = run
        self.fn = fn
        self.median = median
        self.last = time.perf_counter()


_reference: _Reference | None = None


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Sequence[Any] | None = None,
    quantiles: Sequence[float] | None = None,
    return_mode: str = "mean",
) -> Any:
    """`triton.testing.do_bench` for synchronous host-driven devices (what `get_benchmarker` gives autotune).

    The same contract (milliseconds; quantiles or `return_mode`), but the sample is sized by its spread, not by
    `rep` alone: the device shares its cores with the host, so a run's time varies with what else runs, and the
    median of the 7 runs `rep / estimate` gives for a 14 ms kernel moved 2x between processes on PoCL. Sampling
    stops once the median's 95% interval is within 1% of it (at least 5 runs, at most `10 * rep`). Each run is
    timed alone, after a cache flush, with the host clock (the launch returns when the work is done).

    Autotune times its configs one after another, and a host shared with other work drifts between them (a config
    of cpu_ref's matmul took 9.9 ms in one process and 16.3 in another while its rivals were 1-7% apart): so in an
    autotuning run (`autotune_run_of`) every config after the first alternates its runs with the first config's and
    reports its times scaled by the first's median then / now. What decides the winner is each config's ratio to
    the first, measured side by side; the times stay in the first config's milliseconds. Other callers are timed
    as they are.
    """
    global _reference
    from triton.runtime import driver

    active = driver.active
    run = autotune_run_of(fn)
    ref = _reference
    if run is None or ref is None or ref.run != run or ref.fn is fn or time.perf_counter() - ref.last > BURST_GAP_S:
        ref = None
    fn()
    cache = active.get_empty_cache_for_benchmark()

    def timed(f: Callable[[], Any]) -> float:
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        active.clear_cache(cache)
        start = time.perf_counter()
        f()
        return (time.perf_counter() - start) * 1e3

    deadline = time.perf_counter() + warmup / 1e3
    while time.perf_counter() < deadline:
        fn()
    times: list[float] = []
    ref_times: list[float] = []
    start = time.perf_counter()
    while True:
        times.append(timed(fn))
        if ref is not None:
            ref_times.append(timed(ref.fn))
        spent = (time.perf_counter() - start) * 1e3
        if len(times) >= MIN_SAMPLES and spent >= rep and (settled(times) or spent >= MAX_REP_FACTOR * rep):
            break
    if ref is None:
        _reference = _Reference(run, fn, statistics.median(times)) if run is not None else None
    else:
        scale = ref.median / statistics.median(ref_times)
        times = [t * scale for t in times]
        ref.last = time.perf_counter()
    return summarize(times, quantiles, return_mode)


__all__ = [
    "DEFAULT_FLUSH_BYTES",
    "MAX_FLUSH_BYTES",
    "clear",
    "do_bench",
    "flush_buffer",
    "flush_bytes",
    "last_level_cache_bytes",
    "median_interval",
    "summarize",
]
