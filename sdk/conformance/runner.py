"""Conformance runs: every case × dtype × shape on a backend, against a chosen reference, with an honest report.

    report = triton_backend_sdk.conformance.run(backend="cpu_ref", reference="cuda-golden")
    print(report.table()); print(report.closing_line())     # "N passed, M failed, K unsupported"

References:
- `torch`: each case's own reference (float64 torch or exact integer arithmetic) under its tolerance class.
- `interpreter`: Triton's interpreter on the same inputs (cases it cannot run fall back to torch, noted).
- `cuda-golden`: outputs Triton's CUDA backend produced for the same inputs on a real GPU (`goldens.py`).
- `cuda-live`: the CUDA backend in this process, side by side (needs a CUDA GPU).
Nothing is skipped silently: a case a backend refuses at compile time is `unsupported`, anything else that goes
wrong is a failure with its message.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from xml.sax.saxutils import escape

from ..driver import activate
from . import goldens as G
from .cases import Case, all_cases
from .suite import CaseResult, compare_with_interpreter, make_launch, run_case, run_interpreted

REFERENCES = ("torch", "interpreter", "cuda-golden", "cuda-live")


@dataclass
class Report:
    backend: str
    reference: str
    results: list[CaseResult] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def count(self, outcome: str) -> int:
        return sum(r.outcome == outcome for r in self.results)

    @property
    def passed(self) -> int:
        return self.count("pass")

    @property
    def failed(self) -> int:
        return self.count("fail") + self.count("error")

    @property
    def unsupported(self) -> int:
        return self.count("unsupported")

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def closing_line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.unsupported} unsupported"

    def table(self) -> str:
        """Feature × dtype: pass / FAIL / unsup (or counts where a cell mixes outcomes across shapes)."""
        dtypes = sorted({r.dtype for r in self.results})
        cells: dict[tuple[str, str], list[str]] = {}
        for r in self.results:
            cells.setdefault((r.feature, r.dtype), []).append(r.outcome)
        features = sorted({r.feature for r in self.results})
        width = max([len(f) for f in features] + [7])
        lines = [f"{'feature':{width}s} " + " ".join(f"{d:>9s}" for d in dtypes)]
        for f in features:
            row = []
            for d in dtypes:
                outs = cells.get((f, d))
                if not outs:
                    row.append(f"{'-':>9s}")
                    continue
                ok = sum(o == "pass" for o in outs)
                uns = sum(o == "unsupported" for o in outs)
                if ok == len(outs):
                    cell = "pass"
                elif uns == len(outs):
                    cell = "unsup"
                elif ok == 0 and uns == 0:
                    cell = "FAIL"
                else:
                    cell = f"{ok}/{len(outs)}"
                row.append(f"{cell:>9s}")
            lines.append(f"{f:{width}s} " + " ".join(row))
        return "\n".join(lines)

    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if r.outcome in ("fail", "error")]

    def to_json(self, path: str) -> None:
        data = {
            "backend": self.backend,
            "reference": self.reference,
            "meta": self.meta,
            "summary": {"passed": self.passed, "failed": self.failed, "unsupported": self.unsupported},
            "results": [{k: v for k, v in asdict(r).items() if k != "outputs"} for r in self.results],
        }
        with open(path, "w") as f:
            json.dump(data, f, indent=1)

    def to_junit(self, path: str) -> None:
        cases = []
        for r in self.results:
            name = escape(f"{r.case}[{r.dtype}-{'x'.join(map(str, r.shape))}]", {'"': "&quot;"})
            body = ""
            if r.outcome in ("fail", "error"):
                body = (
                    f'<failure message="{escape(r.message[:300], {chr(34): "&quot;"})}">{escape(r.message)}</failure>'
                )
            elif r.outcome == "unsupported":
                body = f'<skipped message="unsupported: {escape(r.message[:300], {chr(34): "&quot;"})}"/>'
            cases.append(f'  <testcase classname="{escape(r.feature)}" name="{name}">{body}</testcase>')
        xml = (
            f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="conformance-{self.backend}" '
            f'tests="{len(self.results)}" failures="{self.failed}" skipped="{self.unsupported}">\n'
            + "\n".join(cases)
            + "\n</testsuite>\n"
        )
        with open(path, "w") as f:
            f.write(xml)


def select(cases: list[Case], pattern: str | None) -> list[tuple[Case, str, tuple[int, ...]]]:
    """Runs whose `case[dtype-shape]` id (or feature) contains every space-separated word of `pattern`."""
    words = pattern.split() if pattern else []
    runs = []
    for c in cases:
        for d, s in c.params():
            ident = f"{c.name}[{d}-{'x'.join(map(str, s))}] {c.feature}"
            if all(w in ident for w in words):
                runs.append((c, d, s))
    return runs


def _progress(i: int, n: int, label: str) -> None:
    """A redrawn bar on a terminal; elsewhere (a pipe, a CI log) one line per tenth of the runs, not thousands of
    carriage-return updates on one line."""
    if not sys.stderr.isatty():
        step = max(1, n // 10)
        if i == n or i % step == 0:
            sys.stderr.write(f"conformance: {i}/{n} runs\n")
            sys.stderr.flush()
        return
    bar = int(30 * i / max(n, 1))
    sys.stderr.write(f"\r[{'#' * bar}{'.' * (30 - bar)}] {i}/{n} {label[:50]:50s}")
    if i == n:
        sys.stderr.write("\n")
    sys.stderr.flush()


def run(
    backend: str | None = None,
    reference: str = "torch",
    filter: str | None = None,
    seed: int = 0,
    progress: Callable[[int, int, str], None] | None = None,
    goldens_path: str | None = None,
) -> Report:
    """Run the conformance suite on `backend` (default: Triton's active driver) and compare with `reference`."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    import triton
    import triton_backend_sdk
    from triton.runtime import driver

    previous = driver.active
    if backend is not None:
        triton_backend_sdk.use(backend)
    name = backend or driver.active.get_current_target().backend
    golden_set = G.GoldenSet.load(goldens_path or G.DEFAULT_PATH) if reference == "cuda-golden" else None
    report = Report(name, reference, meta={"triton": triton.__version__, "seed": seed})
    if golden_set is not None:
        report.meta["goldens"] = golden_set.meta
    runs = select(all_cases(), filter)
    t0 = time.perf_counter()
    try:
        for i, (case, dtype, shape) in enumerate(runs):
            if progress:
                progress(i, len(runs), case.name)
            report.results.append(_run_one(case, dtype, shape, seed, reference, golden_set, previous))
        if progress:
            progress(len(runs), len(runs), "done")
        if reference == "interpreter":
            _compare_interpreted(report, runs, seed)
    finally:
        activate(previous)
    report.meta["seconds"] = round(time.perf_counter() - t0, 1)
    if reference != "torch":
        report.meta["compared_with_torch_instead"] = sum(r.message.startswith("vs torch") for r in report.results)
    return report


def _compare_interpreted(report: Report, runs: list[tuple[Case, str, tuple[int, ...]]], seed: int) -> None:
    """Replace the torch verdict by the interpreter's where the interpreter can run the case (noted otherwise)."""
    todo = [
        (i, c, d, s)
        for i, (c, d, s) in enumerate(runs)
        if report.results[i].outcome in ("pass", "fail") and c.interpreter
    ]
    interpreted = run_interpreted([(c.name, d, s) for _, c, d, s in todo], seed) if todo else {}
    for i, c, d, s in todo:
        res = report.results[i]
        ref = interpreted.get((c.name, d, tuple(s)))
        if not isinstance(ref, list):
            res.message = f"vs torch: the interpreter failed: {str(ref)[:200]}"
            continue
        ok, res.max_error, res.message = compare_with_interpreter(c, d, make_launch(c, d, s, seed), res.outputs, ref)
        res.outcome = "pass" if ok else "fail"
    for i, (c, _, _) in enumerate(runs):
        if not c.interpreter and report.results[i].outcome in ("pass", "fail"):
            report.results[i].message = "vs torch: the interpreter cannot run this case"


def _run_one(
    case: Case,
    dtype: str,
    shape: tuple[int, ...],
    seed: int,
    reference: str,
    golden_set: G.GoldenSet | None,
    previous_driver: Any,
) -> CaseResult:
    res = run_case(case, dtype, shape, seed)
    if res.outcome not in ("pass", "fail") or reference == "torch":
        return res
    tol = case.tolerance_for(dtype)
    if reference == "interpreter":
        return res  # compared in one batch after all runs (the interpreter runs in a child process)
    if reference == "cuda-golden":
        assert golden_set is not None
        record = golden_set.get(case.name, dtype, shape, seed)
        if record is None:
            res.message = "vs torch: no CUDA golden for this run (regenerate: tools/gpu/make_cuda_goldens.py)"
            return res
        if record["outcome"] != "pass":
            # the CUDA path could not run this case, or itself misses the case's bound against the exact reference
            # (its approximate fp32 division and sqrt, tf32 dots, Triton-version differences; listed with the
            # goldens): the torch comparison above stands, and says so
            res.message = f"vs torch: CUDA path {record['outcome']}: {record['message'][:200]}"
            return res
        else:
            ok, err, msg = G.compare(record, res.outputs, G.golden_tolerance(tol))
    else:
        outcome, outputs, message = run_on_cuda(case, dtype, shape, seed)
        if outcome not in ("pass", "fail"):
            ok, err, msg = False, float("inf"), f"CUDA path: {outcome}: {message}"
        else:
            from .suite import check_outputs

            ok, err, msg = check_outputs(case, dtype, make_launch(case, dtype, shape, seed), res.outputs, outputs)
    res.outcome = "pass" if ok else "fail"
    res.max_error = err
    res.message = msg
    return res


def _to_cuda(a: Any) -> Any:
    """Tensors, and the tensors inside host-side tensor descriptors, moved to the GPU."""
    import dataclasses

    import torch

    if isinstance(a, torch.Tensor):
        return a.cuda()
    if dataclasses.is_dataclass(a) and isinstance(getattr(a, "base", None), torch.Tensor):
        return dataclasses.replace(a, base=a.base.cuda())
    return a


def _cuda_scratch(size: int, alignment: int, stream: Any) -> Any:
    """Global scratch for kernels that build tensor descriptors on the device (Triton asks for an allocator)."""
    import torch

    return torch.empty(size, dtype=torch.int8, device="cuda")


def run_on_cuda(case: Case, dtype: str, shape: tuple[int, ...], seed: int) -> tuple[str, list, str]:
    """Run a case with Triton's own CUDA backend on this machine's GPU; outputs come back to the CPU."""
    import torch
    from triton.backends import backends
    from triton.runtime import driver

    from .suite import check_outputs, make_launch

    if "nvidia" not in backends or not torch.cuda.is_available():
        return "error", [], "no CUDA GPU with Triton's nvidia backend in this process"
    previous = driver.active
    activate(backends["nvidia"].driver())
    import triton

    triton.set_allocator(_cuda_scratch)
    try:
        try:
            launch = make_launch(case, dtype, shape, seed)
            inputs = launch.clone()
            launch.args = [_to_cuda(a) for a in launch.args]
            case.kernel[launch.grid](*launch.args, **launch.constexprs, **launch.options)
            torch.cuda.synchronize()
            outputs = [getattr(launch.args[i], "base", launch.args[i]).cpu() for i in launch.outputs]
            ok, _, msg = check_outputs(case, dtype, launch, outputs, case.reference(inputs, dtype))
        except Exception as e:  # noqa: BLE001 - reported as the CUDA path's outcome
            return "error", [], f"{type(e).__name__}: {e}"[:500]
        return ("pass" if ok else "fail"), outputs, msg
    finally:
        activate(previous)
