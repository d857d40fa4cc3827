"""What `triton.testing.do_bench` and `triton.autotune` need from an SDK driver to time a host-driven device: a
cache-flush buffer sized to the host's last-level cache, and a flush that costs what its bytes cost.

`do_bench` estimates a kernel's time over five (flush + run) rounds and takes `rep / estimate` samples, so a slow
flush shrinks the sample: a 27 ms flush left 3-4 samples for a 1 ms kernel, and autotune's median of those picked
different winners run to run.
"""

from __future__ import annotations

import ctypes
import functools
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


def flush_bytes() -> int:
    """Twice the last-level cache: writing it evicts what a previous run left there."""
    llc = last_level_cache_bytes()
    return 2 * llc if llc else DEFAULT_FLUSH_BYTES


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


__all__ = ["DEFAULT_FLUSH_BYTES", "clear", "flush_buffer", "flush_bytes", "last_level_cache_bytes"]
