"""Running the benchmark cases on SDK backends against their peers, interleaved, with the roofline measured first.

Timing is `timing.interleaved_rounds`, not pytest + pytest-benchmark: the command must run from the installed
package (benchmarks/ and its conftest are not packaged, and pytest-benchmark is a dev-only dependency), one case
here times ours against up to four peers, two of them in child processes that pytest-benchmark cannot drive, and
pytest would collect under the caller's configuration (PYTEST_ADDOPTS, a conftest in the working directory). The
pytest benchmarks in benchmarks/ run the same case bodies with the same interleaving, under pytest-benchmark.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from . import roofline
from .cases import Case, Prepared
from .children import Child, ChildError
from .timing import Sampler, interleaved_rounds, local, spread

#: a case's repeats spread (slowest round median over fastest) above this gets a warning line. The ratios are read
#: against targets 5-20% apart (issue 4: 0.95x-1.2x) and quiet-machine runs here spread 1.02-1.35 per config
#: (benchmarks/autotune_stability.py); a side whose own rounds differ by more than 25% saw a busy machine in some
#: of them, and its median can be off by more than the differences the table is read for
SPREAD_WARN = 1.25

#: interpreter rounds (rounds, calls per round): it is 100-1000x slower, one call per round is plenty
INTERP_ROUNDS = {"full": (3, 1), "quick": (3, 1), "smoke": (1, 1)}
#: roofline repeats per mode (best of) and the sgemm size
TRIAD_REPEATS = {"full": 10, "quick": 5, "smoke": 2}
SGEMM = {"full": (2048, 5), "quick": (1024, 3), "smoke": (64, 1)}

Progress = Callable[[str], None]


def _stats(samples: list[float]) -> dict[str, Any]:
    return {
        "median_ms": statistics.median(samples),
        "min_ms": min(samples),
        "max_ms": max(samples),
        "spread": spread(samples),
        "rounds_ms": samples,
    }


def _rate(case: Case, prepared: Prepared, ms: float) -> float:
    if case.metric == "us/launch":
        return ms * 1e3 / prepared.work
    return prepared.work / (ms / 1e3) / 1e9


def _fraction(case: Case, rate: float, ceilings: dict[str, Any]) -> float | None:
    if case.metric == "GB/s":
        return rate / ceilings["triad"]["gbps"]
    if case.metric == "GFLOP/s":
        return rate / ceilings["sgemm"]["gflops"]
    return None


class Runner:
    """One run: the children (numpy, interpreter) are started once and serve every case."""

    def __init__(self, mode: str, progress: Progress, interpreter: bool = True) -> None:
        self.mode = mode
        self.progress = progress
        self.start = time.perf_counter()
        self._numpy: Child | None = None
        self._interp: Child | None = None
        self._interpreter = interpreter
        self.openblas_core: str | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def numpy(self) -> Child:
        if self._numpy is None:
            self._numpy = Child("numpy")
        return self._numpy

    def interp(self) -> Child:
        if self._interp is None:
            self._interp = Child("interpreter")
        return self._interp

    def close(self) -> None:
        for child in (self._numpy, self._interp):
            if child is not None:
                child.close()

    def ceilings(self) -> dict[str, Any]:
        triad = roofline.triad(self.mode, TRIAD_REPEATS[self.mode])
        size, repeats = SGEMM[self.mode]
        try:
            numpy: Child | None = self.numpy()
        except ChildError as e:
            self.progress(f"warning: numpy peer unavailable: {e}")
            numpy = None
        sgemm = roofline.sgemm(size, repeats, numpy)
        self.openblas_core = sgemm.get("openblas_core")
        self.progress(
            f"[{self.elapsed():6.1f}s] roofline: triad {triad['gbps']:.1f} GB/s, sgemm {sgemm['gflops']:.0f} GFLOP/s "
            f"({sgemm['source']}, {size}^3)"
        )
        return {"triad": triad, "sgemm": sgemm}

    def case(self, case: Case, backend: str, ceilings: dict[str, Any]) -> dict[str, Any]:
        """Time `case` on the active backend `backend`; errors are recorded in the result, not raised."""
        t0 = time.perf_counter()
        size = dict(case.sizes[self.mode])
        rounds, reps = case.rounds[self.mode]
        rec: dict[str, Any] = {
            "case": case.name,
            "backend": backend,
            "metric": case.metric,
            "size": size,
            "size_label": case.label(size),
            "rounds": rounds,
            "reps": reps,
            "peers": {},
            "warnings": [],
        }
        try:
            self._measure(case, backend, rec)
            rec["roofline_fraction"] = _fraction(case, rec["rate"], ceilings)
        except Exception as e:  # noqa: BLE001 - one failing case must not hide the others
            rec["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:500]
        rec["seconds"] = time.perf_counter() - t0
        self._report(rec)
        return rec

    def _measure(self, case: Case, backend: str, rec: dict[str, Any]) -> None:
        prepared = case.build(rec["size"], backend)
        samplers: dict[str, Sampler] = {"ours": local(prepared.ours)}
        samplers.update({name: local(fn) for name, fn in prepared.peers.items()})
        if case.numpy:
            try:
                numpy = self.numpy()
                numpy.setup(case.name, rec["size"])
                samplers["numpy"] = numpy
            except ChildError as e:
                rec["warnings"].append(f"numpy peer not timed: {e}")
        if prepared.config:
            rec["config"] = prepared.config
            rec["size_label"] += f", {prepared.config}"
        times = interleaved_rounds(samplers, rec["rounds"], rec["reps"])
        rec["check"] = prepared.check()
        rec["ours"] = _stats(times.pop("ours"))
        ours_ms = rec["ours"]["median_ms"]
        rec["rate"] = _rate(case, prepared, ours_ms)
        for name, samples in times.items():
            peer = _stats(samples)
            peer["ratio"] = peer["median_ms"] / ours_ms
            peer["rate"] = _rate(case, prepared, peer["median_ms"])
            rec["peers"][name] = peer
        if "numpy" in rec["peers"]:
            rec["peers"]["numpy"]["openblas_core"] = self.numpy().openblas_core()
        if case.interp_sizes is not None and self._interpreter:
            rec["peers"]["interpreter"] = self._interpreted(case, backend)
        wide = [
            f"{n} {s['spread']:.2f}x"
            for n, s in [("ours", rec["ours"]), *rec["peers"].items()]
            if s.get("spread", 0) > SPREAD_WARN
        ]
        if wide:
            rec["warnings"].append(f"repeats spread above {SPREAD_WARN}x (slowest/fastest round): {', '.join(wide)}")

    def _interpreted(self, case: Case, backend: str) -> dict[str, Any]:
        """The Triton interpreter against ours at the interpreter's (smaller) size, interleaved."""
        assert case.interp_sizes is not None
        size = dict(case.interp_sizes[self.mode])
        rounds, reps = INTERP_ROUNDS[self.mode]
        try:
            child = self.interp()
            child.setup(case.name, size)
        except ChildError as e:
            return {"size": size, "error": str(e)[-500:]}
        small = case.build(size, backend)
        try:
            times = interleaved_rounds({"ours": local(small.ours), "interpreter": child}, rounds, reps)
        except ChildError as e:  # a child that died mid-round is replaced for the next case
            child.close()
            self._interp = None
            return {"size": size, "error": str(e)[-500:]}
        out = _stats(times["interpreter"])
        out.update(size=size, size_label=case.label(size), ours_median_ms=statistics.median(times["ours"]))
        out["ratio"] = out["median_ms"] / out["ours_median_ms"]
        return out

    def _report(self, rec: dict[str, Any]) -> None:
        head = f"[{self.elapsed():6.1f}s] {rec['case']:18s} {rec['backend']:8s} {rec['size_label']:28s}"
        if "error" in rec:
            self.progress(f"{head} ERROR {rec['error']}")
            return
        ratios = " ".join(f"{n}={p['ratio']:.2f}" for n, p in rec["peers"].items() if "ratio" in p)
        ok = "ok" if rec["check"]["ok"] else "WRONG"
        self.progress(f"{head} {rec['ours']['median_ms']:9.3f} ms {rec['rate']:8.1f} {rec['metric']:9s} {ok} {ratios}")
        for w in rec["warnings"]:
            self.progress(f"warning: {rec['case']} on {rec['backend']}: {w}")


def stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(
    cases: list[Case], backends: list[str], mode: str, progress: Progress = stderr_progress, interpreter: bool = True
) -> dict[str, Any]:
    """Every case on every backend (each made Triton's active driver in turn, the previous one restored), between
    two measurements of the roofline."""
    import triton_backend_sdk
    from triton.runtime import driver

    from ..driver import activate
    from .host import host, utc_now, versions

    threads = torch.get_num_threads()
    runner = Runner(mode, progress, interpreter)
    report: dict[str, Any] = {"date": utc_now(), "mode": mode, "host": host(threads), "versions": versions()}
    try:
        report["roofline"] = runner.ceilings()
        results = []
        for backend in backends:
            prev = driver.active
            try:
                triton_backend_sdk.use(backend)
            except Exception as e:  # noqa: BLE001 - a backend that cannot start fails its cases, not the run
                error = f"backend {backend} did not start: {type(e).__name__}: {e}".splitlines()[0][:500]
                progress(f"[{runner.elapsed():6.1f}s] {error}")
                results += [{"case": c.name, "backend": backend, "error": error, "peers": {}} for c in cases]
                continue
            try:
                results += [runner.case(case, backend, report["roofline"]) for case in cases]
            finally:
                activate(prev)
        report["roofline"] = _best(report["roofline"], runner.ceilings())
        for rec, case in zip(results, [c for _ in backends for c in cases]):
            if "rate" in rec:
                rec["roofline_fraction"] = _fraction(case, rec["rate"], report["roofline"])
        report["results"] = results
        report["host"]["openblas_core"] = runner.openblas_core
    finally:
        runner.close()
    report["seconds"] = runner.elapsed()
    report["inductor_cpu_backend"] = _inductor_cpu_backend()
    return report


def _best(first: dict[str, Any], last: dict[str, Any]) -> dict[str, Any]:
    """The higher of the ceilings measured before and after the cases (a ceiling measured while the shared machine
    was busy put a matmul at 158% of it), each with both measurements."""
    out = {}
    for name, key in (("triad", "gbps"), ("sgemm", "gflops")):
        best = max(first[name], last[name], key=lambda m: m[key])
        out[name] = {**best, "measured": [first[name][key], last[name][key]]}
    return out


def _inductor_cpu_backend() -> str | None:
    """Which code torch.compile's peers ran (Inductor's C++ by default; "triton" would route them through an SDK)."""
    try:
        from torch._inductor import config

        return str(config.cpu_backend)
    except Exception:  # noqa: BLE001 - an informational field
        return None


def failed(report: dict[str, Any]) -> bool:
    """A case of ours that raised or computed a wrong result (a peer that could not run is a warning)."""
    return any("error" in r or not r["check"]["ok"] for r in report["results"])
