"""Shared fixtures: the SDK backends under test, and a per-backend driver switch.

One suite runs against every backend: tests that take the `backend` fixture run once per SDK backend that can run
here. A backend that cannot run on this machine is reported as skipped with the reason.
"""

from __future__ import annotations

import os

import pytest
import torch

#: SDK backends and why each might not be able to run here
SDK_BACKENDS = ["cpu_ref", "opencl"]


def _unavailable(name: str) -> str | None:
    from triton.backends import backends

    if name not in backends:
        return f"backend {name!r} is not registered with Triton (is the package installed?)"
    if name == "opencl":
        try:
            from triton_backend_sdk.backends.opencl.runtime import selected_device

            selected_device()
        except Exception as e:  # noqa: BLE001 - pyopencl missing, no ICD, no device: all mean "cannot run here"
            return f"opencl: no usable OpenCL device ({e})"
    return None


@pytest.fixture(params=SDK_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Make `request.param` Triton's active driver for the test, restoring the previous one after."""
    name = request.param
    reason = _unavailable(name)
    if reason:
        pytest.skip(reason)
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    previous = driver.active
    triton_backend_sdk.use(name)
    yield name
    activate(previous)


@pytest.fixture
def rng() -> torch.Generator:
    seed = int(os.environ.get("TBS_TEST_SEED", "1234"))
    return torch.Generator().manual_seed(seed)
