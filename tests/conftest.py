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
#: execution variants run as extra `backend` params: opencl on a CPU device defaults to one work-item per program;
#: `opencl@wg128` runs the GPU execution model (128 work-items, local memory, barriers) on the same device
VARIANTS = {"opencl@wg128": ("opencl", {"TRITON_OPENCL_WORK_ITEMS": "128"})}


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


@pytest.fixture(params=SDK_BACKENDS + list(VARIANTS))
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Make `request.param` Triton's active driver for the test, restoring the previous one after; a variant
    yields its backend's name with the variant's environment set."""
    name, env = VARIANTS.get(request.param, (request.param, {}))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    reason = _unavailable(name)
    if reason:
        pytest.skip(reason)
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    previous = driver.active
    triton_backend_sdk.use(name)
    if env:  # the JIT's in-memory caches are keyed by launch arguments, not by the environment
        from triton_backend_sdk.plugins import drop_jit_caches

        drop_jit_caches()
    yield name
    activate(previous)
    if env:
        drop_jit_caches()


@pytest.fixture
def cpu_ref_active():
    """cpu_ref as Triton's active driver for a test of its own code generation; the previous driver is restored."""
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    prev = driver.active
    triton_backend_sdk.use("cpu_ref")
    yield
    activate(prev)


@pytest.fixture
def ocl():
    """opencl as Triton's active driver for the test (skipped with the reason where no OpenCL device exists); the
    previous driver is restored through `activate`, which drops the JIT caches on the change back."""
    reason = _unavailable("opencl")
    if reason:
        pytest.skip(reason)
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    previous = driver.active
    triton_backend_sdk.use("opencl")
    yield
    activate(previous)


@pytest.fixture
def rng() -> torch.Generator:
    seed = int(os.environ.get("TBS_TEST_SEED", "1234"))
    return torch.Generator().manual_seed(seed)


#: the worker's crash log where TBS_FAULT_LOG_DIR is set (pytest_configure)
_FAULT_LOG = None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Where TBS_FAULT_LOG_DIR is set (.ci/run sets it), each xdist worker keeps a log there (named by worker and
    process, so that a nested pytest run cannot truncate it): the test it starts with its memory at that point, and
    Python's stacks of every thread if it dies of a signal. xdist reports only 'worker crashed while running X'.
    With `--capture=sys` (.ci/run passes it through PYTEST_ADDOPTS) the worker's file descriptor 2 goes to the log
    as well, so that what native code prints before it aborts (glibc, LLVM, C++ terminate, a fatal Python error)
    is kept in order with the tests; under fd capture it would go to the test's capture file and die with it.
    Last of the configure hooks: pytest's faulthandler plugin enables faulthandler on stderr in its own, which would
    replace this log (the stacks then land amid the progress dots, cut from the tail CI keeps)."""
    global _FAULT_LOG
    directory = os.environ.get("TBS_FAULT_LOG_DIR")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not directory or not worker:
        return
    import faulthandler

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{worker}.{os.getpid()}.log")
    _FAULT_LOG = open(path, "w", buffering=1)  # noqa: SIM115 - the worker's life
    if config.getoption("capture") in ("sys", "no"):
        os.dup2(_FAULT_LOG.fileno(), 2)
    faulthandler.enable(file=_FAULT_LOG, all_threads=True)


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    if _FAULT_LOG is not None:
        _FAULT_LOG.write(f"start {nodeid} rss_mb={_rss_mb()}\n")


def _rss_mb() -> int:
    try:
        with open("/proc/self/status") as f:
            return int(f.read().split("VmRSS:")[1].split()[0]) // 1024
    except (OSError, IndexError, ValueError):
        return -1
