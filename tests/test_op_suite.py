"""The conformance op suite on every SDK backend: every case × dtype × shape, against its float64/exact reference,
and (where Triton's interpreter supports the case) against the interpreter on the first shape.

A backend that refuses a case at compile time with UnsupportedError/LoweringError shows as xfail with its message;
any other exception fails. A crash (segfault) names the running test through pytest's faulthandler output.
"""

from __future__ import annotations

import pytest
from triton_backend_sdk.conformance.cases import all_cases
from triton_backend_sdk.conformance.suite import compare_with_interpreter, run_case

SEED = 20261129

PARAMS = [pytest.param(c, d, s, id=f"{c.name}-{d}-{'x'.join(map(str, s))}")
          for c in all_cases() for d, s in c.params()]
INTERP = [pytest.param(c, d, c.shapes[0], id=f"{c.name}-{d}") for c in all_cases() for d in c.dtypes
          if c.interpreter and d != "bfloat16"]


@pytest.mark.parametrize("case,dtype,shape", PARAMS)
def test_case(backend, case, dtype, shape):
    r = run_case(case, dtype, shape, SEED)
    if r.outcome == "unsupported":
        pytest.xfail(r.message)
    assert r.outcome == "pass", f"{case.name} [{dtype}, {shape}] ({case.feature}): {r.outcome}: {r.message}"


@pytest.mark.parametrize("case,dtype,shape", INTERP)
def test_matches_interpreter(backend, case, dtype, shape):
    r = run_case(case, dtype, shape, SEED)
    if r.outcome == "unsupported":
        pytest.xfail(r.message)
    assert r.outcome == "pass", r.message
    ok, _, msg = compare_with_interpreter(case, dtype, shape, r.outputs, SEED)
    assert ok, f"{case.name} [{dtype}] differs from Triton's interpreter: {msg}"
