"""Running conformance cases: on Triton's active driver (any backend, a vendor's included) or in the interpreter.

    for case in all_cases():
        for dtype, shape in case.params():
            result = run_case(case, dtype, shape, seed=0)    # CaseResult: outcome, max_error, message, outputs

`unsupported` is the outcome when the backend refuses the case at compile time with `UnsupportedError` (of which
`LoweringError` is one); any other exception is an `error`. `run_interpreted` runs the same inputs through Triton's
interpreter (in a child process with TRITON_INTERPRET=1), and `compare_with_interpreter` checks outputs against it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field

import torch

from ..errors import UnsupportedError
from ..plugins import forget_kernels
from .cases import Case, Launch, all_cases, get_case

OUTCOMES = ("pass", "fail", "unsupported", "error")


@dataclass
class CaseResult:
    case: str
    feature: str
    dtype: str
    shape: tuple[int, ...]
    outcome: str
    max_error: float = 0.0
    message: str = ""
    outputs: list[torch.Tensor] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"


def make_launch(case: Case, dtype: str, shape: tuple[int, ...], seed: int) -> Launch:
    return case.build(dtype, shape, torch.Generator().manual_seed(seed))


def _unsupported(exc: BaseException) -> UnsupportedError | None:
    """The UnsupportedError behind `exc` (Triton wraps some compile errors), or None."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, UnsupportedError):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def _launch(kernel, launch: Launch) -> None:
    kernel[launch.grid](*launch.args, **launch.constexprs, **launch.options)


def check_outputs(
    case: Case, dtype: str, launch: Launch, outputs: list[torch.Tensor], expected: list[torch.Tensor]
) -> tuple[bool, float, str]:
    tol = case.tolerance_for(dtype)
    worst, passed, messages = 0.0, True, []
    for i, (got, want) in enumerate(zip(outputs, expected)):
        ok, err, msg = tol.compare(got, want)
        worst = max(worst, err)
        if not ok:
            passed = False
            messages.append(f"output #{i} (argument {launch.outputs[i]}): {msg}")
    return passed, worst, "; ".join(messages)


def _tensor(arg: object) -> torch.Tensor:
    """An output argument's tensor (a host TensorDescriptor's base tensor)."""
    return arg if isinstance(arg, torch.Tensor) else arg.base  # type: ignore[attr-defined]


def run_case(case: Case, dtype: str, shape: tuple[int, ...], seed: int = 0) -> CaseResult:
    """Run one case on the active driver and compare with its reference."""
    launch = make_launch(case, dtype, shape, seed)
    inputs = launch.clone()
    res = CaseResult(case.name, case.feature, dtype, tuple(shape), "error")
    try:
        _launch(case.kernel, launch)
    except Exception as e:  # noqa: BLE001 - classified below
        u = _unsupported(e)
        if u is not None:
            res.outcome, res.message = "unsupported", str(u)
        else:
            res.message = "".join(traceback.format_exception_only(type(e), e)).strip()
        return res
    finally:
        forget_kernels(case.kernel)  # one-off specializations: keep the process's memory flat over the suite
    res.outputs = [_tensor(launch.args[i]) for i in launch.outputs]
    expected = case.reference(inputs, dtype)
    ok, res.max_error, res.message = check_outputs(case, dtype, launch, res.outputs, expected)
    res.outcome = "pass" if ok else "fail"
    return res


def _interpret_here(case: Case, dtype: str, shape: tuple[int, ...], seed: int) -> list[torch.Tensor]:
    """Run under TRITON_INTERPRET=1 (set before triton was imported: every @jit function is interpreted)."""
    launch = make_launch(case, dtype, shape, seed)
    options = {k: v for k, v in launch.options.items() if k != "debug"}
    case.kernel[launch.grid](*launch.args, **launch.constexprs, **options)
    return [_tensor(launch.args[i]) for i in launch.outputs]


def run_interpreted(
    items: list[tuple[str, str, tuple[int, ...]]], seed: int = 0, timeout: float = 900.0
) -> dict[tuple[str, str, tuple[int, ...]], list[torch.Tensor] | str]:
    """Outputs of (case name, dtype, shape) items run by Triton's interpreter on the same inputs; an item the
    interpreter cannot run maps to its error message. The interpreter needs TRITON_INTERPRET=1 before triton is
    imported, so the items run in one child process unless this process already has it."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        out: dict[tuple[str, str, tuple[int, ...]], list[torch.Tensor] | str] = {}
        for name, dtype, shape in items:
            try:
                out[(name, dtype, tuple(shape))] = _interpret_here(get_case(name), dtype, tuple(shape), seed)
            except Exception as e:  # noqa: BLE001 - reported per item
                out[(name, dtype, tuple(shape))] = f"{type(e).__name__}: {e}"
        return out
    with tempfile.TemporaryDirectory() as d:
        spec, result = os.path.join(d, "items.json"), os.path.join(d, "outputs.pt")
        with open(spec, "w") as f:
            json.dump({"seed": seed, "items": [[n, dt, list(s)] for n, dt, s in items]}, f)
        env = dict(os.environ, TRITON_INTERPRET="1")
        subprocess.run(
            [sys.executable, "-m", "triton_backend_sdk.conformance.suite", spec, result],
            env=env,
            check=True,
            timeout=timeout,
        )
        return torch.load(result)


def compare_with_interpreter(
    case: Case, dtype: str, launch: Launch, outputs: list[torch.Tensor], interpreted: list[torch.Tensor]
) -> tuple[bool, float, str]:
    """Whether a backend's `outputs` agree with the interpreter's for the same inputs, under the case's tolerance."""
    return check_outputs(case, dtype, launch, outputs, interpreted)


def run_all(seed: int = 0) -> list[CaseResult]:
    return [run_case(c, d, s, seed) for c in all_cases() for d, s in c.params()]


def feature_table(results: list[CaseResult]) -> dict[str, dict[str, int]]:
    """Per feature: how many results had each outcome (what a conformance report prints)."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        row = table.setdefault(r.feature, dict.fromkeys(OUTCOMES, 0))
        row[r.outcome] += 1
    return table


def _main(argv: list[str]) -> None:
    spec, result = argv
    with open(spec) as f:
        req = json.load(f)
    out = run_interpreted([(n, dt, tuple(s)) for n, dt, s in req["items"]], req["seed"])
    torch.save(out, result)


if __name__ == "__main__":
    _main(sys.argv[1:])
