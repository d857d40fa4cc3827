"""Benchmark helpers: time our kernel and its peer interleaved in the same run and record the ratio.

The machine is shared and noisy, so each case alternates ours/peer for several rounds and compares medians; the
ratio is peer_time / our_time (> 1: we are faster). pytest-benchmark times our side; `extra_info` carries the rest.
The interleaving (and its warm-up before each round) is `triton_backend_sdk.bench.timing`, the one `triton-sdk bench` uses.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from triton_backend_sdk.bench.timing import WARM_S, interleaved, median_ms

__all__ = ["WARM_S", "interleaved", "median_ms"]


class _Recorded(dict):
    """The measurements of one case; keys set later (derived numbers) land in the benchmark's extra_info too."""

    def __init__(self, sink: dict, data: dict) -> None:
        super().__init__(data)
        self._sink = sink
        sink.update(data)

    def __setitem__(self, key: str, value: object) -> None:
        super().__setitem__(key, value)
        self._sink[key] = value


@pytest.fixture(autouse=True)
def active_backend(request: pytest.FixtureRequest):
    """Make the benchmark module's `BACKEND` Triton's active driver for each case, restoring the previous one."""
    name = getattr(request.module, "BACKEND", None)
    if name is None:
        yield
        return
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    prev = driver.active
    triton_backend_sdk.use(name)
    yield
    activate(prev)


@pytest.fixture
def compare(benchmark):
    """compare(ours, peer, work=None, unit=None): benchmark ours, time peer interleaved, record the ratio."""

    def run(
        ours: Callable[[], object],
        peer: Callable[[], object] | None,
        work: float | None = None,
        unit: str = "",
        rounds: int = 7,
    ) -> dict:
        torch.set_num_threads(2)
        info: dict = {}
        if peer is not None:
            ours_ms, peer_ms = interleaved(ours, peer, rounds=rounds)
            info.update(ours_ms=ours_ms, peer_ms=peer_ms, ratio=peer_ms / ours_ms)
        else:
            ours_ms = median_ms(ours, rounds)
            info.update(ours_ms=ours_ms)
        if work is not None:
            info[unit or "rate"] = work / (ours_ms / 1e3)
        benchmark.pedantic(ours, rounds=rounds, iterations=1, warmup_rounds=1)
        return _Recorded(benchmark.extra_info, info)

    return run
