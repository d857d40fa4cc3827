"""Interleaved timing: ours and each peer alternate round by round, so all of them see the same machine state.

The machine is shared and noisy; a peer timed minutes after ours would compare two different machines. Each round
takes the median of a few calls per side; the case's time is the median of the rounds and its spread is the largest
round over the smallest.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping

#: untimed calls before each round's timed ones, for at least this long. Two effects of this shared host make the
#: first milliseconds of a round unlike the rest: torch's OpenMP workers spin-wait ~5 ms after each parallel op
#: (measured: CPU time spent during a sleep after torch.softmax) and share the 2 cores with whatever runs next; and
#: after ~10 ms idle the vCPUs come back slow (numpy exp of 2^22 floats 1.86 ms back to back, 2.68 ms after a 10 ms
#: sleep; a cpu_ref softmax 1.36 vs 4.97 ms, with twice the CPU time), hitting every side by how its threads wait.
#: The earlier 10 ms idle gap before each call avoided the first and paid the second; warming both out times each
#: side in steady state, as kernels that run back to back in a model do.
WARM_S = 0.02

#: after a side's timed calls, its process waits (in windows of SETTLE_WINDOW_S, at most SETTLE_MAX_S) until its
#: threads use under SETTLE_BUSY of a core, so that the next side is not timed against them. numpy's OpenBLAS
#: workers spin 0.12 s after each sgemm (measured: CPU time of the child during a sleep after its call), on one of
#: the 2 cores, through the warm call and the first timed ones of whatever runs next: cpu_ref's matmul ran 231
#: GFLOP/s in the bench where alone 310-318
SETTLE_WINDOW_S = 0.01
SETTLE_BUSY = 0.2
SETTLE_MAX_S = 0.5

#: a sampler times one round: given a call count, it returns the median of that many calls in milliseconds (a
#: callable of this process, or a request to a child process that times its own calls)
Sampler = Callable[[int], float]


def timed_calls(fn: Callable[[], object], reps: int) -> list[float]:
    """Seconds of each of `reps` back-to-back calls of `fn`, after untimed calls for at least WARM_S."""
    deadline = time.perf_counter() + WARM_S
    fn()
    while time.perf_counter() < deadline:
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    settle()
    return ts


def settle() -> float:
    """Wait until this process's threads are idle (spin-waiting workers gone to sleep); the seconds waited."""
    start = time.perf_counter()
    while time.perf_counter() - start < SETTLE_MAX_S:
        cpu, t = time.process_time(), time.perf_counter()
        time.sleep(SETTLE_WINDOW_S)
        if time.process_time() - cpu < SETTLE_BUSY * (time.perf_counter() - t):
            break
    return time.perf_counter() - start


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """The median of `reps` warmed, back-to-back calls of `fn` in milliseconds."""
    return statistics.median(timed_calls(fn, reps)) * 1e3


def local(fn: Callable[[], object]) -> Sampler:
    return lambda reps: median_ms(fn, reps)


def interleaved_rounds(samplers: Mapping[str, Sampler], rounds: int, reps: int) -> dict[str, list[float]]:
    """Per sampler, the median (ms) of each of `rounds` rounds; every sampler runs twice, untimed, before round 1
    (a torch.compile'd peer still did extra work on its second call, 0.14 ms against 0.03 after)."""
    for sample in samplers.values():
        sample(2)
    out: dict[str, list[float]] = {name: [] for name in samplers}
    for _ in range(rounds):
        for name, sample in samplers.items():
            out[name].append(sample(reps))
    return out


def interleaved(
    ours: Callable[[], object], peer: Callable[[], object], rounds: int = 7, reps: int = 3
) -> tuple[float, float]:
    """Medians (ms) of ours and peer, measured in alternation so both see the same machine state."""
    r = interleaved_rounds({"ours": local(ours), "peer": local(peer)}, rounds, reps)
    return statistics.median(r["ours"]), statistics.median(r["peer"])


def spread(samples: list[float]) -> float:
    """Largest over smallest round (1.0: all rounds equal)."""
    return max(samples) / min(samples) if samples and min(samples) > 0 else float("nan")
