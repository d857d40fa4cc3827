"""tools/kernel_library_tests.py on a small library of its own: the dtype choice per test function, and each outcome
(pass, fail, error, skip, a test that aborts the process, one that hangs) recorded for the test that had it, the run
resuming after a crash."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "kernel_library_tests", Path(__file__).parent.parent / "tools" / "kernel_library_tests.py"
)
runner = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = runner
_spec.loader.exec_module(runner)

LIBRARY_TESTS = """
import os
import time

import pytest
import torch


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float16])
@pytest.mark.parametrize("n", [3, 5])
def test_dtype_choice(dtype, n):
    assert dtype in (torch.float32, torch.bfloat16)


@pytest.mark.parametrize("name", ["fp16", "fp32"])
def test_named_in_id(name):
    assert name == "fp32"


def test_fails():
    assert 1 + 1 == 3, "arithmetic"


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_errors(broken):
    pass


def test_aborts():
    os.abort()


def test_after_abort():
    pass


def test_hangs():
    time.sleep(60)


def test_skipped():
    pytest.skip("needs CUDA")


def test_last():
    pass
"""


def test_choose_picks_the_dtype_per_function() -> None:
    items = {
        "t.py::f[dtype0-1]": ["torch.bfloat16"],
        "t.py::f[dtype1-1]": ["torch.float32"],
        "t.py::f[dtype1-2]": ["torch.float32"],
        "t.py::g[fp16]": ["fp16"],
        "t.py::g[fp32]": ["fp32"],
        "t.py::h[3]": [],
        "t.py::only_half[dtype0]": ["torch.float16"],
        "t.py::plain": [],
    }
    assert runner.choose(items, "fp32") == ["t.py::f[dtype1-1]", "t.py::g[fp32]", "t.py::h[3]", "t.py::plain"]
    assert runner.choose(items, "bf16") == ["t.py::f[dtype0-1]"]


def test_every_outcome_lands_on_its_test(tmp_path: Path) -> None:
    src = tmp_path / "lib"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_lib.py").write_text(LIBRARY_TESTS)
    out = tmp_path / "out"
    status = runner.main(
        ["--library", "liger", "--src", str(src), "--tests", "tests", "--timeout", "3", "--out", str(out)]
    )
    assert status == 0
    results = json.loads((out / "results.json").read_text())["results"]
    outcomes = {nodeid.split("::")[1]: record["outcome"] for nodeid, record in results.items()}
    assert outcomes == {
        "test_dtype_choice[3-dtype1]": "passed",
        "test_named_in_id[fp32]": "passed",
        "test_fails": "failed",
        "test_errors": "error",
        "test_aborts": "crash",
        "test_after_abort": "passed",
        "test_hangs": "timeout",
        "test_skipped": "skipped",
        "test_last": "passed",
    }
    assert "SIGABRT" in results["tests/test_lib.py::test_aborts"]["reason"]
    assert "arithmetic" in results["tests/test_lib.py::test_fails"]["reason"]
    assert "fixture broke" in results["tests/test_lib.py::test_errors"]["reason"]
    summary = (out / "summary.md").read_text()
    assert "| liger | cpu_ref | fp32 | 9 | 4 | 1 | 1 | 1 | 1 | 1 | 0 | 0 |" in summary


def test_k_leaves_out_what_it_deselects(tmp_path: Path) -> None:
    """`-k` selects at collection: a test it deselects is neither run nor counted (the OOM-prone test of a suite)."""
    src = tmp_path / "lib"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_lib.py").write_text(LIBRARY_TESTS)
    out = tmp_path / "out"
    argv = ["--library", "liger", "--src", str(src), "--tests", "tests", "--timeout", "3", "--out", str(out)]
    assert runner.main([*argv, "-k", "test_fails or test_last"]) == 0
    results = json.loads((out / "results.json").read_text())["results"]
    assert {nodeid.split("::")[1]: r["outcome"] for nodeid, r in results.items()} == {
        "test_fails": "failed",
        "test_last": "passed",
    }


def test_an_id_that_differs_per_process_is_not_run_once(tmp_path: Path) -> None:
    """A parameter id drawn at random when the module is imported is another id in the run's process: pytest runs
    nothing and exits 5; the runner records it as not run instead of starting batch after batch."""
    src = tmp_path / "lib"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_lib.py").write_text(
        "import random\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('n', [random.randrange(10**9)])\ndef test_random_id(n):\n    pass\n"
    )
    out = tmp_path / "out"
    argv = ["--library", "liger", "--src", str(src), "--tests", "tests", "--timeout", "3", "--out", str(out)]
    assert runner.main(argv) == 0
    results = json.loads((out / "results.json").read_text())["results"]
    assert [r["outcome"] for r in results.values()] == ["not_run"]
