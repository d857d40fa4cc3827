"""What a benchmark report says about where it ran: the CPU, its last-level cache, the threads, the versions."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from typing import Any

from ..benchmarking import last_level_cache_bytes


def cpu_info(path: str = "/proc/cpuinfo") -> dict[str, Any]:
    """Model name, family and model of the first CPU listed (Linux), else what `platform` knows."""
    info: dict[str, Any] = {"model_name": platform.processor() or platform.machine()}
    keys = {"model name": "model_name", "cpu family": "family", "model": "model", "flags": "flags"}
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                name = keys.get(key.strip())
                if name:
                    info[name] = value.strip()
    except OSError:
        pass
    flags = set(info.pop("flags", "").split())
    info["avx512"] = "avx512f" in flags
    for name in ("family", "model"):
        if str(info.get(name, "")).isdigit():
            info[name] = int(info[name])
    return info


def versions() -> dict[str, str]:
    import numpy
    import torch
    import triton

    from .. import __version__

    out = {
        "sdk": __version__,
        "triton": triton.__version__,
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }
    try:
        import pyopencl

        out["pyopencl"] = pyopencl.VERSION_TEXT
    except ImportError:
        pass
    return out


def launcher_threads() -> int | None:
    """Threads of the SDK's native launcher pool (cpu_ref's programs run on it)."""
    try:
        from .. import _native

        return int(_native.get_num_threads())
    except (ImportError, AttributeError):
        return None


def host(threads: int) -> dict[str, Any]:
    llc = last_level_cache_bytes()
    return {
        "sdk_launcher_threads": launcher_threads(),
        "cpu": cpu_info(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "llc_bytes": llc,
        "threads": threads,
        "platform": platform.platform(),
        "openblas_env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ},
    }


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
