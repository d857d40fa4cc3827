"""This machine's ceilings, measured in the same run as the cases: a STREAM-style triad for memory bandwidth and
the best BLAS sgemm for fp32 flops. A case's roofline fraction is its rate over the matching ceiling."""

from __future__ import annotations

from typing import Any

import torch

from ..benchmarking import last_level_cache_bytes
from .children import Child, ChildError
from .timing import timed_calls

#: each triad array is this many times the last-level cache, so that no array is served from it
TRIAD_LLC_FACTOR = 4
#: per-array size where the host does not say its cache size
TRIAD_DEFAULT_BYTES = 256 << 20
#: per-array size in smoke mode (a unit test's few milliseconds: a number, not a ceiling)
TRIAD_SMOKE_BYTES = 4 << 20


def triad(mode: str, repeats: int) -> dict[str, Any]:
    """a = b + s*c on torch's threads, best of `repeats`; GB/s counts the 3 arrays (2 read, 1 written)."""
    llc = last_level_cache_bytes()
    per_array = TRIAD_SMOKE_BYTES if mode == "smoke" else TRIAD_LLC_FACTOR * llc if llc else TRIAD_DEFAULT_BYTES
    n = per_array // 4
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    torch.add(b, c, alpha=3.0, out=a)  # first touch of a's pages, untimed
    best = min(timed_calls(lambda: torch.add(b, c, alpha=3.0, out=a), repeats))
    return {
        "gbps": 3 * 4 * n / best / 1e9,
        "array_bytes": 4 * n,
        "repeats": repeats,
        "threads": torch.get_num_threads(),
    }


def sgemm(size: int, repeats: int, numpy: Child | None) -> dict[str, Any]:
    """GFLOP/s of the faster of torch.mm and numpy's OpenBLAS (in `numpy`, a child without the OpenBLAS overrides),
    each its best of `repeats` at size^3."""
    a, b, c = torch.randn(size, size), torch.randn(size, size), torch.empty(size, size)
    torch.mm(a, b, out=c)
    best = min(timed_calls(lambda: torch.mm(a, b, out=c), repeats))
    flops = 2 * size**3
    out: dict[str, Any] = {"size": size, "repeats": repeats, "torch_mm_gflops": flops / best / 1e9}
    if numpy is not None:
        try:
            numpy.setup("matmul_fp32", {"n": size})
            out["numpy_gflops"] = flops / (min(numpy(1) for _ in range(repeats)) / 1e3) / 1e9
            out["openblas_core"] = numpy.openblas_core()
        except ChildError as e:
            out["numpy_error"] = str(e)
    out["gflops"] = max(out["torch_mm_gflops"], out.get("numpy_gflops", 0.0))
    out["source"] = "numpy (OpenBLAS)" if out.get("numpy_gflops", 0.0) > out["torch_mm_gflops"] else "torch.mm"
    return out
