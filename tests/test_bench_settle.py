"""The bench's settling between sides (sdk/bench/timing.py): a side's process waits after its timed calls until its
threads stop using the CPU, so that a peer's spin-waiting workers (numpy's OpenBLAS: 0.12 s after each sgemm) are
not running on the 2 cores while the next side is timed."""

from __future__ import annotations

import threading
import time

from triton_backend_sdk.bench import timing


def _spin(seconds: float, done: threading.Event) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    done.set()


def test_settle_waits_for_a_spinning_worker_to_stop():
    done = threading.Event()
    threading.Thread(target=_spin, args=(0.15, done), daemon=True).start()
    waited = timing.settle()
    assert done.is_set(), f"settle returned after {waited:.3f} s with the worker still spinning"


def test_settle_returns_after_one_window_when_idle():
    assert timing.settle() < timing.SETTLE_MAX_S


def test_settle_gives_up_after_its_limit(monkeypatch):
    """A process that never goes idle (a worker spinning past the limit) is timed anyway, after SETTLE_MAX_S."""
    monkeypatch.setattr(timing, "SETTLE_MAX_S", 0.05)
    done = threading.Event()
    threading.Thread(target=_spin, args=(0.4, done), daemon=True).start()
    timing.settle()
    assert not done.is_set()
    done.wait()


def test_timed_calls_settle_after_the_last_call(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(timing, "settle", lambda: calls.append("settle") or 0.0)
    ts = timing.timed_calls(lambda: calls.append("call"), 3)
    assert len(ts) == 3 and calls[-1] == "settle" and calls.count("settle") == 1
