"""The package's benchmark cases (triton_backend_sdk.bench.cases) at their full size, for the pytest benchmarks."""

from __future__ import annotations

from triton_backend_sdk.bench.cases import Prepared, get


def full(name: str, backend: str) -> Prepared:
    """Case `name` built at its full (issue 4) size for `backend`."""
    case = get(name)
    return case.build(case.sizes["full"], backend)


def assert_ok(prepared: Prepared) -> None:
    """The case's correctness check against torch, as an assertion."""
    result = prepared.check()
    assert result["ok"], f"max abs err {result['max_abs_err']:.3g}: {result['message']}"
