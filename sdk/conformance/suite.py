"""Running conformance cases: on Triton's active driver (any backend, a vendor's included) or in the interpreter.

    for case in all_cases():
        for dtype, shape in case.params():
            result = run_case(case, dtype, shape, seed=0)    # CaseResult: outcome, max_error, message, outputs

`unsupported` is the outcome when the backend refuses the case at compile time with `UnsupportedError` (of which
`LoweringError` is one); any other exception is an `error`. `run_interpreted` runs the same inputs through
`triton.runtime.interpreter`, and `compare_with_interpreter` checks a backend's outputs against it.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

import torch

from ..errors import UnsupportedError
from .cases import Case, Launch, all_cases

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


def check_outputs(case: Case, dtype: str, launch: Launch, outputs: list[torch.Tensor],
                  expected: list[torch.Tensor]) -> tuple[bool, float, str]:
    tol = case.tolerance_for(dtype)
    worst, passed, messages = 0.0, True, []
    for i, (got, want) in enumerate(zip(outputs, expected)):
        ok, err, msg = tol.compare(got, want)
        worst = max(worst, err)
        if not ok:
            passed = False
            messages.append(f"output #{i} (argument {launch.outputs[i]}): {msg}")
    return passed, worst, "; ".join(messages)


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
    res.outputs = [launch.args[i] for i in launch.outputs]
    expected = case.reference(inputs, dtype)
    ok, res.max_error, res.message = check_outputs(case, dtype, launch, res.outputs, expected)
    res.outcome = "pass" if ok else "fail"
    return res


def run_interpreted(case: Case, dtype: str, shape: tuple[int, ...], seed: int = 0) -> list[torch.Tensor]:
    """The outputs of the same inputs run through Triton's interpreter (CPU tensors, numpy semantics)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    launch = make_launch(case, dtype, shape, seed)
    options = {k: v for k, v in launch.options.items() if k != "debug"}
    # helpers the kernel calls must run interpreted too (as under TRITON_INTERPRET=1): swap them in its globals
    g = case.kernel.fn.__globals__
    helpers = {k: v for k, v in g.items() if isinstance(v, JITFunction) and v is not case.kernel}
    try:
        g.update({k: InterpretedFunction(v.fn) for k, v in helpers.items()})
        InterpretedFunction(case.kernel.fn)[launch.grid](*launch.args, **launch.constexprs, **options)
    finally:
        g.update(helpers)
    return [launch.args[i] for i in launch.outputs]


def compare_with_interpreter(case: Case, dtype: str, shape: tuple[int, ...], outputs: list[torch.Tensor],
                             seed: int = 0) -> tuple[bool, float, str]:
    """Whether `outputs` (a backend's, same seed) agree with the interpreter's, under the case's tolerance."""
    launch = make_launch(case, dtype, shape, seed)
    return check_outputs(case, dtype, launch, outputs, run_interpreted(case, dtype, shape, seed))


def run_all(seed: int = 0) -> list[CaseResult]:
    return [run_case(c, d, s, seed) for c in all_cases() for d, s in c.params()]


def feature_table(results: list[CaseResult]) -> dict[str, dict[str, int]]:
    """Per feature: how many results had each outcome (what a conformance report prints)."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        row = table.setdefault(r.feature, dict.fromkeys(OUTCOMES, 0))
        row[r.outcome] += 1
    return table
