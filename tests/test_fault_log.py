"""The crash log CI relies on (tests/conftest.py, TBS_FAULT_LOG_DIR): a worker killed by a fault leaves Python's stacks
in its log. Without this check the log silently lost every stack for two stops: pytest's faulthandler plugin
re-enabled faulthandler on stderr after the conftest had pointed it at the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_CONFTEST = Path(__file__).with_name("conftest.py")

_HOOKS = f"""
import importlib.util

_spec = importlib.util.spec_from_file_location("tbs_tests_conftest", {str(_CONFTEST)!r})
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
pytest_configure = _mod.pytest_configure
pytest_runtest_logstart = _mod.pytest_runtest_logstart
"""

_CRASHING = """
import ctypes
import threading


def test_before():
    pass


def test_faults_in_a_thread():
    t = threading.Thread(target=ctypes.string_at, args=(0,), name="faulting")
    t.start()
    t.join()
"""

_ABORTING = """
import ctypes
import os


def test_prints_natively_and_aborts():
    libc = ctypes.CDLL(None)
    libc.write(2, b"native: about to abort\\n", 23)
    os.abort()
"""


def _crash_worker(tmp_path: Path, name: str, source: str, **env_extra: str) -> str:
    """Run test file `source` in one xdist worker with the crash log on; the worker must crash. Returns its log."""
    (tmp_path / "conftest.py").write_text(_HOOKS)
    (tmp_path / name).write_text(source)
    logs = tmp_path / "logs"
    env = {**os.environ, "TBS_FAULT_LOG_DIR": str(logs), **env_extra}
    env.pop("PYTEST_XDIST_WORKER", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "no:cacheprovider", name]
    out = subprocess.run(cmd, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "crashed while running" in out.stdout, out.stdout + out.stderr
    (log_path,) = logs.glob("gw0.*.log")
    return log_path.read_text()


@pytest.mark.skipif(sys.platform != "linux", reason="the fault is a NULL read, delivered as SIGSEGV on Linux")
def test_a_worker_fault_leaves_its_stacks_in_the_log(tmp_path: Path) -> None:
    log = _crash_worker(tmp_path, "test_crashing.py", _CRASHING)
    assert "start test_crashing.py::test_before rss_mb=" in log
    assert "start test_crashing.py::test_faults_in_a_thread rss_mb=" in log
    assert "Fatal Python error: Segmentation fault" in log, log
    assert "in test_faults_in_a_thread" in log, log


@pytest.mark.skipif(sys.platform != "linux", reason="SIGABRT and fd 2 as on Linux")
def test_under_sys_capture_native_stderr_before_an_abort_reaches_the_log(tmp_path: Path) -> None:
    log = _crash_worker(tmp_path, "test_aborting.py", _ABORTING, PYTEST_ADDOPTS="--capture=sys")
    assert "native: about to abort" in log, log
    assert "Fatal Python error: Aborted" in log, log
    assert log.index("start test_aborting.py::") < log.index("native: about to abort") < log.index("Fatal Python")
