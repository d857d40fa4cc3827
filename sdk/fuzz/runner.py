"""The fuzz run: generate kernels, run each on every backend and on the interpreter (worker processes), compare,
minimize what fails and write repros.

A *case* is one expression of a kernel (one output). Kernel-level failures (a crash, a hang, a compile or runtime
error on a backend where the interpreter ran the kernel) count once per kernel and are also reported with the
number of cases they hid. A kernel the interpreter itself cannot run is `invalid` (a generator bug), not compared.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .compare import CaseResult, compare
from .gen import generate, is_approx
from .known import known_for, matching
from .minimize import minimize
from .pool import Reply, Worker
from .render import render
from .spec import KernelSpec
from .worker import INTERPRETER

#: interpreter runs per kernel with an approximate operation: run 0 exact, 6 perturbed (interp_ref.py)
REFERENCE_RUNS = 7
DEFAULT_BACKENDS = ("cpu_ref", "opencl")


@dataclass
class Failure:
    kind: str  # a mismatch kind (guard, int, float, float-approx) or crash, timeout, compile-error, runtime-error
    backend: str
    kernel: str
    case: int | None
    detail: dict[str, Any]
    repro: str | None = None
    known: list[str] = field(default_factory=list)  # known.py entries whose construct the kernel/case has


@dataclass
class FuzzReport:
    seed: int
    backends: list[str]
    kernels: int = 0
    cases: int = 0
    counts: Counter = field(default_factory=Counter)  # per (backend, outcome)
    failures: list[Failure] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    compile_s: Counter = field(default_factory=Counter)
    busy_s: Counter = field(default_factory=Counter)  # per backend: seconds its workers spent on jobs
    skipped_elements: int = 0
    elements: int = 0
    stopped: str | None = None  # "time limit" or "interrupted": the counts cover the kernels that ran

    @property
    def ok(self) -> bool:
        return not self.failures and not self.invalid

    def new_failures(self) -> list[Failure]:
        """Failures not explained by a known bug (known.py)."""
        return [f for f in self.failures if not f.known]

    def mismatch_kinds(self) -> Counter:
        return Counter(f.kind for f in self.failures)

    def summary(self) -> list[str]:
        stop = f" (stopped: {self.stopped})" if self.stopped else ""
        lines = [f"fuzz: seed {self.seed}, {self.kernels} kernels, {self.cases} cases, {self.seconds:.1f} s{stop}"]
        for b in self.backends:
            c = {k[1]: v for k, v in self.counts.items() if k[0] == b}
            lines.append(
                f"  {b:14s} ok {c.get('ok', 0)}, mismatch {c.get('mismatch', 0)}, unchecked {c.get('unchecked', 0)}, "
                f"not run {c.get('not-run', 0)} (kernel failures: crash {c.get('crash', 0)}, timeout "
                f"{c.get('timeout', 0)}, compile-error {c.get('compile-error', 0)}, runtime-error "
                f"{c.get('runtime-error', 0)}); compile {self.compile_s[b]:.0f} s, busy {self.busy_s[b]:.0f} s"
            )
        lines.append(f"  interpreter busy {self.busy_s[INTERPRETER]:.0f} s")
        lines.append(f"  elements compared {self.elements}, skipped as ill-conditioned {self.skipped_elements}")
        if self.invalid:
            lines.append(f"  {len(self.invalid)} kernels the interpreter could not run (generator bugs)")
        for f in self.failures:
            where = f"case {f.case}" if f.case is not None else "kernel"
            known = f" [known: {', '.join(f.known)}]" if f.known else ""
            lines.append(f"  FAIL {f.kind} on {f.backend}: {f.kernel} {where}: {_brief(f.detail)}{known}")
            if f.repro:
                lines.append(f"       repro: {f.repro}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "backends": self.backends,
            "kernels": self.kernels,
            "cases": self.cases,
            "counts": {f"{b}:{o}": n for (b, o), n in sorted(self.counts.items())},
            "mismatch_kinds": dict(self.mismatch_kinds()),
            "failures": [f.__dict__ for f in self.failures],
            "invalid": self.invalid,
            "seconds": round(self.seconds, 1),
            "stopped": self.stopped,
            "compile_s": {b: round(s, 1) for b, s in self.compile_s.items()},
            "busy_s": {b: round(s, 1) for b, s in self.busy_s.items()},
            "elements": self.elements,
            "skipped_elements": self.skipped_elements,
        }


def signature(f: Failure) -> str:
    """What distinguishes one bug from another: the kind, backend and, for an error, its first compiler or Python
    error line with numbers and paths removed."""
    import re

    text = str(f.detail.get("error", ""))
    lines = [ln for ln in text.splitlines() if "error" in ln.lower()]
    line = lines[1] if len(lines) > 1 else (lines[0] if lines else "")
    line = re.sub(r"(/[^\s:]+)+", "<path>", line)
    line = re.sub(r"[%\"'.\w]*\d+[\w.]*", "#", line)
    return f"{f.kind}|{f.backend}|{line[:160]}"


def _brief(d: dict[str, Any]) -> str:
    if "error" in d:
        return str(d["error"]).splitlines()[0][:200]
    ex = d.get("examples") or [{}]
    return f"{d.get('bad')} of {d.get('elements')} elements, e.g. {ex[0]}"


class _Session:
    """Workers per backend, reused across kernels (and by minimization)."""

    def __init__(self, backends: list[str], logdir: str, jobs: int, timeout: float) -> None:
        self.timeout = timeout
        self.workers = {
            b: [Worker(b, os.path.join(logdir, f"{b}.{j}.log")) for j in range(1 if b == INTERPRETER else jobs)]
            for b in [INTERPRETER] + backends
        }

    def run(self, backend: str, path: str, runs: int, result: str, worker: int = 0) -> Reply:
        job = {"id": os.path.basename(path), "file": path, "runs": runs, "result": result}
        return self.workers[backend][worker].run(job, self.timeout)

    def close(self) -> None:
        for ws in self.workers.values():
            for w in ws:
                w.close()


def _kernel_failure(reply: Reply) -> str | None:
    if reply.status == "ok":
        return None
    if reply.status == "error":
        return "compile-error" if reply.info.get("phase") in ("load", "compile") else "runtime-error"
    return reply.status  # crash, timeout


def _runs(spec: KernelSpec) -> int:
    return REFERENCE_RUNS if any(is_approx(e.node) for e in spec.exprs) else 1


def _write(spec: KernelSpec, path: str) -> str:
    with open(path, "w") as f:
        f.write(render(spec))
    return path


def evaluate(spec: KernelSpec, refs: list[list[torch.Tensor]], got: list[torch.Tensor]) -> list[CaseResult]:
    return [compare(e, [r[c] for r in refs], got[c]) for c, e in enumerate(spec.exprs)]


class Fuzzer:
    def __init__(
        self,
        *,
        seed: int = 0,
        backends: list[str] | tuple[str, ...] = DEFAULT_BACKENDS,
        out: str | None = None,
        exprs_per_kernel: int = 8,
        jobs: int = 1,
        timeout: float = 600.0,
        opt_levels: tuple[int, ...] = (3,),
        minimize_budget: float = 120.0,
        max_minimize: int = 8,
        avoid_known: bool = False,
        time_limit: float | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.seed = seed
        self.backends = list(backends)
        self.out = out
        self.exprs = exprs_per_kernel
        self.jobs = jobs
        self.timeout = timeout
        self.opt_levels = opt_levels
        self.minimize_budget = minimize_budget
        self.max_minimize = max_minimize
        self.avoid = tuple(known_for(self.backends)) if avoid_known else ()
        self.time_limit = time_limit  # no kernel is started after this many seconds
        self.progress = progress or (lambda msg: None)

    # --- the run -------------------------------------------------------------------------------------------------
    def run(self, cases: int) -> FuzzReport:
        t0 = time.monotonic()
        work = self.out if self.out else tempfile.mkdtemp(prefix="tsdk-fuzz-")
        kdir, rdir, ldir = (os.path.join(work, d) for d in ("kernels", "results", "logs"))
        for d in (kdir, rdir, ldir):
            os.makedirs(d, exist_ok=True)
        report = FuzzReport(self.seed, self.backends)
        specs = []
        left, k = cases, 0
        while left > 0:
            spec = generate(self.seed, k, exprs=min(self.exprs, left), opt_levels=self.opt_levels, avoid=self.avoid)
            specs.append(spec)
            left -= len(spec.exprs)
            k += 1
        paths = [_write(s, os.path.join(kdir, f"{s.name}.py")) for s in specs]
        session = _Session(self.backends, ldir, self.jobs, self.timeout)
        try:
            self._run_all(session, specs, paths, rdir, report, t0)
            if report.stopped != "interrupted":  # who stops a run wants its report now, not after minimizing
                self._minimize_failures(session, specs, report, work)
        finally:
            session.close()
            if not self.out:
                shutil.rmtree(work, ignore_errors=True)
        report.seconds = time.monotonic() - t0
        return report

    def _run_all(self, session: _Session, specs, paths, rdir, report: FuzzReport, t0: float) -> None:
        todo = {b: queue.Queue() for b in session.workers}
        for k in range(len(specs)):
            for q in todo.values():
                q.put(k)
        replies: dict[int, dict[str, Reply]] = {k: {} for k in range(len(specs))}
        lock = threading.Lock()
        done: queue.Queue[int] = queue.Queue()

        stop = threading.Event()
        deadline = t0 + self.time_limit if self.time_limit else None

        def serve(backend: str, w: int) -> None:
            while True:
                if stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                    return
                try:
                    k = todo[backend].get_nowait()
                except queue.Empty:
                    return
                runs = _runs(specs[k]) if backend == INTERPRETER else 1
                result = os.path.join(rdir, f"{specs[k].name}.{backend}.pt")
                reply = session.run(backend, paths[k], runs, result, w)
                reply.info["result"] = result
                with lock:
                    replies[k][backend] = reply
                    if len(replies[k]) == len(session.workers):
                        done.put(k)

        threads = [
            threading.Thread(target=serve, args=(b, w), daemon=True)
            for b, ws in session.workers.items()
            for w in range(len(ws))
        ]
        for t in threads:
            t.start()
        with _stopped_by_signals(stop, report, self.progress):
            self._collect(specs, paths, replies, done, threads, report, t0)
        for t in threads:
            t.join()

    def _collect(self, specs, paths, replies, done, threads, report: FuzzReport, t0: float) -> None:
        n = 0
        while n < len(specs):
            try:
                k = done.get(timeout=1.0)
            except queue.Empty:
                if not any(t.is_alive() for t in threads):  # stopped: kernels not run by every backend are dropped
                    report.stopped = report.stopped or "time limit"
                    break
                continue
            n += 1
            self._evaluate(specs[k], paths[k], replies.pop(k), report)
            report.kernels += 1
            report.cases += len(specs[k].exprs)
            mism = len(report.failures)
            self.progress(
                f"[{n}/{len(specs)} kernels] {report.cases} cases, {mism} failures, "
                f"{len(report.invalid)} invalid, {time.monotonic() - t0:.0f} s"
            )

    def _evaluate(self, spec: KernelSpec, path: str, replies: dict[str, Reply], report: FuzzReport) -> None:
        for b, r in replies.items():
            report.busy_s[b] += r.seconds
        ref = replies[INTERPRETER]
        if ref.status != "ok":
            report.invalid.append({"kernel": spec.name, "file": path, "status": ref.status, **ref.info})
            return
        refs = torch.load(ref.info["result"])
        for b in self.backends:
            r = replies[b]
            if "compile_s" in r.info:
                report.compile_s[b] += r.info["compile_s"]
            kind = _kernel_failure(r)
            if kind is not None:
                report.counts[(b, kind)] += 1
                report.counts[(b, "not-run")] += len(spec.exprs)
                detail = {k: v for k, v in r.info.items() if k != "result"}
                known = [k.test for k in matching(spec, b, None)]
                report.failures.append(Failure(kind, b, spec.name, None, {**detail, "file": path}, known=known))
                continue
            got = torch.load(r.info["result"])[0]
            for c, res in enumerate(evaluate(spec, refs, got)):
                report.counts[(b, res.status)] += 1
                report.elements += res.elements
                report.skipped_elements += res.skipped
                if res.status == "mismatch":
                    detail = {"bad": res.bad, "elements": res.elements, "examples": res.examples, "file": path}
                    known = [k.test for k in matching(spec, b, c)]
                    report.failures.append(Failure(res.kind, b, spec.name, c, detail, known=known))
        if not any(f.kernel == spec.name for f in report.failures):
            for r in replies.values():
                if os.path.exists(r.info.get("result", "")):
                    os.remove(r.info["result"])

    # --- failures ------------------------------------------------------------------------------------------------
    def check(self, session: _Session, spec: KernelSpec, backend: str, tmp: str) -> tuple[Reply, list[CaseResult]]:
        """Run `spec` on the interpreter and `backend`; (the backend's reply, per-case results if both ran)."""
        path = _write(spec, os.path.join(tmp, f"{spec.name}.py"))
        ref = session.run(INTERPRETER, path, _runs(spec), os.path.join(tmp, f"{spec.name}.ref.pt"))
        got = session.run(backend, path, 1, os.path.join(tmp, f"{spec.name}.got.pt"))
        if ref.status != "ok" or got.status != "ok":
            return got, []
        refs = torch.load(os.path.join(tmp, f"{spec.name}.ref.pt"))
        return got, evaluate(spec, refs, torch.load(os.path.join(tmp, f"{spec.name}.got.pt"))[0])

    def _minimize_failures(self, session: _Session, specs, report: FuzzReport, work: str) -> None:
        by_name = {s.name: s for s in specs}
        seen: set[str] = set()
        done = 0
        for f in sorted(report.failures, key=lambda f: bool(f.known)):  # new bugs first
            sig = signature(f)
            if done >= self.max_minimize or not self.out or sig in seen:
                continue
            seen.add(sig)
            done += 1
            spec = by_name[f.kernel]
            tmp = tempfile.mkdtemp(prefix="min-", dir=work)

            def still_fails(trial: KernelSpec, f: Failure = f, tmp: str = tmp) -> bool:
                reply, results = self.check(session, trial, f.backend, tmp)
                if f.case is None:
                    return _kernel_failure(reply) == f.kind
                return bool(results) and results[0].status == "mismatch"

            small, case = minimize(spec, f.case, still_fails, self.minimize_budget)
            self.progress(f"minimized {f.kind} on {f.backend} in {f.kernel}")
            f.repro = write_repro(work, f, spec, small, case, self.seed)
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _stopped_by_signals(stop: threading.Event, report: FuzzReport, progress: Callable[[str], None]):
    """Ctrl-C (SIGINT) or `kill PID` (SIGTERM) stops the run: no kernel is started, the ones under way finish and
    the report covers what ran; a second signal aborts. Handled by a flag, so that no kernel is counted halfway. A
    run started in the background by a script keeps the SIGINT its shell ignores; SIGTERM stops it."""

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        report.stopped = "interrupted"
        progress(f"{signal.Signals(signum).name}: finishing the kernels under way (again to abort)")

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s, h in old.items():
        if h is not signal.SIG_IGN:
            signal.signal(s, on_signal)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def write_repro(work: str, f: Failure, original: KernelSpec, small: KernelSpec, case: int | None, seed: int) -> str:
    """A directory with the minimized kernel (kernel.py), the original kernel, what failed and how to rerun it."""
    name = f"{f.kind}-{f.backend}-{original.name}" + (f"-c{f.case}" if f.case is not None else "")
    d = os.path.join(work, "repros", name)
    os.makedirs(d, exist_ok=True)
    _write(small, os.path.join(d, "kernel.py"))
    _write(original, os.path.join(d, "original.py"))
    info = {
        "kind": f.kind,
        "backend": f.backend,
        "kernel": original.name,
        "case_in_original": f.case,
        "case_in_kernel_py": case,
        "seed": seed,
        "input_seed": original.input_seed,
        "detail": f.detail,
        "command": f"triton-sdk fuzz --replay {os.path.join(d, 'kernel.py')} --backends {f.backend}",
    }
    with open(os.path.join(d, "report.json"), "w") as fh:
        json.dump(info, fh, indent=2, default=str)
    return d


def replay(path: str, backends: list[str], timeout: float = 600.0) -> list[str]:
    """Run a kernel file on the interpreter and `backends`; one line per case and backend ('ok', or what failed)."""
    from .worker import load_kernel

    spec = KernelSpec.from_json(load_kernel(path)[0].to_json())
    tmp = tempfile.mkdtemp(prefix="tsdk-replay-")
    session = _Session(backends, tmp, 1, timeout)
    lines = []
    try:
        ref = session.run(INTERPRETER, os.path.abspath(path), _runs(spec), os.path.join(tmp, "ref.pt"))
        if ref.status != "ok":
            return [f"interpreter: {ref.status}: {_brief(ref.info)}"]
        refs = torch.load(os.path.join(tmp, "ref.pt"))
        for b in backends:
            got = session.run(b, os.path.abspath(path), 1, os.path.join(tmp, f"{b}.pt"))
            kind = _kernel_failure(got)
            if kind:
                lines.append(f"{b}: {kind}: {_brief(got.info)}")
                continue
            for c, res in enumerate(evaluate(spec, refs, torch.load(os.path.join(tmp, f"{b}.pt"))[0])):
                what = (
                    res.status
                    if res.status != "mismatch"
                    else f"MISMATCH ({res.kind}): {res.bad} of {res.elements} elements, e.g. {res.examples[:2]}"
                )
                lines.append(f"{b}: case {c} ({spec.exprs[c].kind}): {what}")
    finally:
        session.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return lines
