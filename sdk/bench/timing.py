"""Interleaved timing: ours and each peer alternate round by round, so all of them see the same machine state.

The machine is shared and noisy; a peer timed minutes after ours would compare two different machines. Each round
takes the median of a few calls per side; the case's time is the median of the rounds and its spread is the largest
round over the smallest.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping

#: idle time before each timed call: torch's OpenMP workers (and other thread pools) spin-wait for a while after a
#: parallel op, and a kernel started in that window shares the 2 cores with spinning threads (measured: opencl vector
#: add 5.5 ms run alone, 6.8 ms right after torch.add, 5.3 ms with OMP_WAIT_POLICY=PASSIVE). With the gap, both
#: sides start from idle pools, as a call after other work would.
GAP_S = 0.01

#: a sampler times one round: given a call count, it returns the median of that many calls in milliseconds (a
#: callable of this process, or a request to a child process that times its own calls)
Sampler = Callable[[int], float]


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """The median of `reps` calls of `fn` in milliseconds, each after GAP_S of idle time."""
    ts = []
    for _ in range(reps):
        time.sleep(GAP_S)
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


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
