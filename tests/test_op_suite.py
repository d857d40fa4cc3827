"""The conformance op suite on every SDK backend: every case × dtype × shape, against its float64/exact reference,
and (where Triton's interpreter supports the case) against the interpreter on the first shape.

A backend that refuses a case at compile time with UnsupportedError/LoweringError shows as xfail with its message;
any other exception fails. A crash (segfault) names the running test through pytest's faulthandler output.
"""

from __future__ import annotations

import pytest
from triton_backend_sdk.conformance.cases import all_cases
from triton_backend_sdk.conformance.suite import compare_with_interpreter, make_launch, run_case, run_interpreted

SEED = 20261129

PARAMS = [pytest.param(c, d, s, id=f"{c.name}-{d}-{'x'.join(map(str, s))}") for c in all_cases() for d, s in c.params()]
INTERP = [
    pytest.param(c, d, c.shapes[0], id=f"{c.name}-{d}")
    for c in all_cases()
    for d in c.dtypes
    if c.interpreter and d != "bfloat16"
]


@pytest.mark.parametrize("case,dtype,shape", PARAMS)
def test_case(backend, case, dtype, shape):
    if not case.runs_on_this_triton():
        pytest.skip(
            f"needs Triton >= {'.'.join(map(str, case.min_triton))} (host-side helpers/frontend); the "
            "package requires 3.7+, this is an older staged install"
        )
    r = run_case(case, dtype, shape, SEED)
    if r.outcome == "unsupported":
        pytest.xfail(r.message)
    assert r.outcome == "pass", f"{case.name} [{dtype}, {shape}] ({case.feature}): {r.outcome}: {r.message}"


_interpreted: dict = {}


def interpreted(case, dtype, shape):
    """The interpreter's outputs, computed once per test process for every INTERP item (one child process)."""
    if not _interpreted:
        _interpreted.update(run_interpreted([(p.values[0].name, p.values[1], p.values[2]) for p in INTERP], SEED))
    return _interpreted[(case.name, dtype, tuple(shape))]


@pytest.mark.parametrize("case,dtype,shape", INTERP)
def test_matches_interpreter(backend, case, dtype, shape):
    r = run_case(case, dtype, shape, SEED)
    if r.outcome == "unsupported":
        pytest.xfail(r.message)
    assert r.outcome == "pass", r.message
    ref = interpreted(case, dtype, shape)
    if isinstance(ref, str):
        pytest.skip(f"Triton's interpreter cannot run this case: {ref[:200]}")
    ok, _, msg = compare_with_interpreter(case, dtype, make_launch(case, dtype, shape, SEED), r.outputs, ref)
    assert ok, f"{case.name} [{dtype}] differs from Triton's interpreter: {msg}"
