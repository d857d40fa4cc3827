"""pytest plugin for tools/kernel_library_tests.py: one JSON line per test, written as it happens.

A kernel library's tests run in one pytest process per batch; when a test takes the process down (an abort inside
LLVM, a segfault in a kernel) the line `{"start": id}` without its result says which one did it, so the runner can
record the crash and resume after it. A watchdog thread ends a test that runs past `--library-timeout` seconds with a
`{"timeout": id}` line (pytest-timeout's thread method cannot say which test it stopped in a machine-readable way).
Selected node ids come from `--library-ids FILE` (one per line): passing thousands of ids on the command line would
overflow it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

_state: dict = {"out": None, "timer": None, "outcomes": {}, "started": {}}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernel library runner")
    group.addoption("--library-log", help="JSON-lines file the results are appended to")
    group.addoption("--library-ids", help="file with the node ids to run, one per line")
    group.addoption("--library-timeout", type=float, default=0.0, help="seconds per test (0: none)")


def pytest_configure(config: pytest.Config) -> None:
    _state["timeout"] = config.getoption("--library-timeout") or 0.0
    path = config.getoption("--library-log")
    if path:
        _state["out"] = open(path, "a", buffering=1)  # noqa: SIM115 - held for the session, flushed per line


def _param_words(item: pytest.Item) -> list[str]:
    """The dtypes and strings an item is parametrized with (torch dtypes print as `dtype0` in node ids)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return []
    return [str(value) for value in callspec.params.values() if type(value).__name__ in ("dtype", "str")]


def pytest_collection_finish(session: pytest.Session) -> None:
    """In collect-only mode, the items pytest's own selection (`-k`, `-m`) left: what the runner chooses from.
    (Written from `modifyitems`, they were the items before `-k` deselected any.)"""
    if session.config.option.collectonly:
        for item in session.items:
            _write({"item": item.nodeid, "params": _param_words(item)})


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.option.collectonly:
        return
    ids_file = config.getoption("--library-ids")
    if not ids_file:
        return
    wanted = [line.strip() for line in Path(ids_file).read_text().splitlines() if line.strip()]
    order = {nodeid: i for i, nodeid in enumerate(wanted)}
    keep = [item for item in items if item.nodeid in order]
    keep.sort(key=lambda item: order[item.nodeid])
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in order])
    items[:] = keep


def _write(record: dict) -> None:
    out = _state["out"]
    if out is not None:
        out.write(json.dumps(record) + "\n")
        out.flush()
        os.fsync(out.fileno())


def _expire(nodeid: str, seconds: float) -> None:
    _write({"timeout": nodeid, "seconds": seconds})
    os._exit(3)


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    _state["outcomes"][nodeid] = ("passed", "")
    _state["started"][nodeid] = time.monotonic()
    _write({"start": nodeid})
    seconds = _state["timeout"]
    if seconds > 0:
        timer = threading.Timer(seconds, _expire, (nodeid, seconds))
        timer.daemon = True
        timer.start()
        _state["timer"] = timer


def _error_line(text: str, fallback: str) -> str:
    """The first `E ` line of a pytest report (the exception and its message), else `fallback`."""
    lines = [line for line in text.splitlines() if line.startswith("E ")]
    return (lines[0] if lines else fallback)[:400]


def _first_line(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])[:400]
    text = (getattr(report, "longreprtext", "") or "").strip()
    return _error_line(text, text.splitlines()[-1] if text else "")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcome, reason = _state["outcomes"].get(report.nodeid, ("passed", ""))
    if report.failed:
        new = "failed" if report.when == "call" else "error"
        if outcome in ("passed", "skipped"):
            outcome, reason = new, _first_line(report)
    elif report.skipped and outcome == "passed":
        if hasattr(report, "wasxfail"):
            outcome, reason = "xfailed", str(report.wasxfail)[:400]
        else:
            outcome, reason = "skipped", _first_line(report)
    _state["outcomes"][report.nodeid] = (outcome, reason)


def pytest_runtest_logfinish(nodeid: str, location: tuple) -> None:
    timer = _state["timer"]
    if timer is not None:
        timer.cancel()
        _state["timer"] = None
    outcome, reason = _state["outcomes"].pop(nodeid, ("passed", ""))
    seconds = time.monotonic() - _state["started"].pop(nodeid, time.monotonic())
    _write({"result": nodeid, "outcome": outcome, "reason": reason, "seconds": round(seconds, 2)})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        text = getattr(report, "longreprtext", "") or ""
        _write({"collect_error": report.nodeid, "reason": _error_line(text, text[-300:])})
