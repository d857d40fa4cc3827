"""The upstream-suite runner: manifest format and matching, JUnit classification, staging, and real runs.

The end-to-end runs use a tiny fake Triton tree (pass / fail / skip / crash / timeout, so every outcome is
produced by real pytest-xdist and pytest-timeout processes) and a handful of Triton's own tests on cpu_ref.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from triton_backend_sdk.upstream import Manifest, classify, default_manifest_path
from triton_backend_sdk.upstream.manifest import CATEGORIES, ManifestError
from triton_backend_sdk.upstream.runner import run
from triton_backend_sdk.upstream.staging import stage

MIRROR = Path("/work/.mirror/lightseekorg+triton/repo")
REV = "f4fca2c0bc0e19930d2be76bb06ee7b232b60e86"  # main, version 3.8.0
REV_37 = "1859e68dbbfa746c31adc44ddd399975bc03c91b"  # the last 3.7.0 commit on main
CORE = "test/unit/language/test_core.py"


def test_manifest_parse_and_match():
    m = Manifest.parse(
        textwrap.dedent("""
        # comment line
        test_core.py::test_optimize_thread_locality*  # gpu-ir: asserts on asm['ttgir']
        test/unit/language/test_core.py::test_abs_fp8[float8e4b8*  # version-skew: fnuz dtype the 3.9 frontend rejects

        test_core.py::test_x[a-1]  # gpu-limit: literal brackets
        """)
    )
    assert [e.line for e in m.entries] == [3, 4, 6]
    assert m.match(f"{CORE}::test_optimize_thread_locality[2-512-64-min]").category == "gpu-ir"
    assert m.match(f"{CORE}::test_abs_fp8[float8e4b8-1]").line == 4
    assert m.match(f"{CORE}::test_abs_fp8[float8e5-1]") is None
    # '[' and ']' are literal, not fnmatch's character classes.
    assert m.match(f"{CORE}::test_x[a-1]").line == 6
    assert m.match(f"{CORE}::test_x[b-1]") is None
    assert m.match(f"{CORE}::test_x[a-1]-more") is None
    # A pattern with '/' is matched against the whole id.
    assert Manifest.parse("other/test_core.py::test_abs_fp8*  # gpu-ir: x").match(f"{CORE}::test_abs_fp8[a]") is None
    assert m.by_category() == {"gpu-ir": 1, "version-skew": 1, "gpu-limit": 1}


@pytest.mark.parametrize(
    "line, why",
    [
        ("test_core.py::test_a*  # not-implemented: no rule yet", "not a by-design reason"),
        ("test_core.py::test_a*", "expected"),
        ("test_core.py::test_a*  # gpu-ir", "expected"),
        ("test_core.py::test_a*  # gpu-ir:   ", "expected"),
        ("test_a test_b  # gpu-ir: two patterns", "expected"),
        ("test_core.py::test_dot[*]  # inexact-reference: ref is off", "one test id"),
    ],
)
def test_manifest_rejects(line, why):
    with pytest.raises(ManifestError, match=why):
        Manifest.parse(line, "m.txt")


@pytest.mark.parametrize("backend", ["cpu_ref", "opencl"])
def test_shipped_manifests_parse(backend):
    path = default_manifest_path(backend)
    assert path is not None and path.name == "upstream_expectations.txt"
    m = Manifest.load(path)
    assert m.entries and set(m.by_category()) <= set(CATEGORIES)
    assert default_manifest_path("no_such_backend") is None


def _case(name: str, body: str = "") -> str:
    return f'<testcase classname="test.unit.language.test_core" name="{name}" time="0.5">{body}</testcase>'


def test_classify_synthetic_junit(tmp_path):
    cases = [
        _case("test_add[1]"),
        _case("test_add[2]"),
        _case("test_add[3]", '<failure message="AssertionError: not close">trace</failure>'),
        _case("test_ttgir[1]", "<failure message=\"KeyError: 'ttgir'\">t</failure>"),
        _case("test_ttgir[2]", '<skipped type="pytest.skip" message="needs 2 warps">s</skipped>'),
        _case("test_boom[1]", "<failure message=\"worker 'gw0' crashed while running 'x'\">c</failure>"),
        _case("test_slow[1]", '<failure message="Failed: Timeout (&gt;2.0s) from pytest-timeout.">t</failure>'),
        _case("test_fixed[1]"),
        _case("test_fixed[2]"),
        _case("test_fixture[1]", '<error message="failed on setup with &quot;E&quot;">e</error>'),
    ]
    xml = tmp_path / "j.xml"
    xml.write_text(f'<testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>')
    manifest = Manifest.parse(
        "test_core.py::test_ttgir*  # gpu-ir: reads TTGIR\n"
        "test_core.py::test_fixed*  # gpu-limit: used to fail\n"
        "test_core.py::test_unrun*  # cuda-torch: not in this sample\n"
    )
    report = classify(xml, manifest, [CORE])
    outcomes = {r.id.split("::")[1]: r.outcome for r in report.results}
    assert outcomes == {
        "test_add[1]": "passed",
        "test_add[2]": "passed",
        "test_add[3]": "failed",
        "test_ttgir[1]": "refused",
        "test_ttgir[2]": "skipped",
        "test_boom[1]": "crashed",
        "test_slow[1]": "timeout",
        "test_fixed[1]": "passed",
        "test_fixed[2]": "passed",
        "test_fixture[1]": "failed",
    }
    assert all(r.id.startswith(f"{CORE}::") for r in report.results)
    assert report.totals() == {"passed": 4, "failed": 2, "refused": 1, "skipped": 1, "crashed": 1, "timeout": 1}
    assert report.by_function()["test_add"] == {
        "passed": 2,
        "failed": 1,
        "refused": 0,
        "skipped": 0,
        "crashed": 0,
        "timeout": 0,
    }
    assert report.results[3].reason == "gpu-ir: reads TTGIR"
    # Only the entry whose every matched test passed is stale; one that matched nothing is not.
    assert report.stale == ["test_core.py::test_fixed*  # gpu-limit: used to fail"]
    errors = report.errors()
    assert len(errors) == 5 and not report.ok
    assert any(e.startswith("NOW PASSES") and "test_fixed" in e for e in errors)
    assert any(e.startswith("CRASHED") and "test_boom[1]" in e for e in errors)
    lines = report.table(only_problems=True).splitlines()
    assert [line.split()[0] for line in lines] == [
        "function",
        "test_add",
        "test_boom",
        "test_fixture",
        "test_slow",
        "test_ttgir",
        "total",
    ]


FAKE_TEST = """
import os, signal, time
import pytest

def test_pass(device):
    assert device == "cpu" and os.environ["TRITON_DEFAULT_BACKEND"] == "fake_be"

@pytest.mark.parametrize("x", [1, 2])
def test_fail(x):
    assert x == 1

def test_skip():
    pytest.skip("by choice")

def test_crash():
    os.abort()

def test_slow():
    time.sleep(60)

def test_stuck_outside_python():
    # SIGALRM blocked stands for a native call that never returns to the interpreter: only the watchdog ends it.
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    time.sleep(60)

def test_after_crash():
    assert os.environ["TRITON_CACHE_DIR"]
"""


def _fake_tree(root: Path) -> Path:
    files = {
        "python/triton/__init__.py": "__version__ = '9.9.9'\n",
        "python/conftest.py": textwrap.dedent("""
            import pytest
            def pytest_addoption(parser):
                parser.addoption("--device", action="store", default="cuda")
            @pytest.fixture
            def device(request):
                return request.config.getoption("--device")
            """),
        "python/test/conftest.py": "",
        "python/test/unit/language/test_fake.py": FAKE_TEST,
        "python/test/unit/language/helper.py": "VALUE = 1\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_run_fake_suite_every_outcome(tmp_path):
    src = _fake_tree(tmp_path / "triton")
    manifest = tmp_path / "m.txt"
    manifest.write_text("test_fake.py::test_fail[2]  # gpu-ir: reads PTX\n")
    report = run(
        str(src),
        "fake_be",
        files=("test_fake.py",),
        workers=1,
        timeout=3,
        manifest=str(manifest),
        work_dir=str(tmp_path / "work"),
        echo=False,
    )
    outcomes = {r.id.split("::")[1]: r.outcome for r in report.results}
    assert outcomes == {
        "test_pass": "passed",
        "test_fail[1]": "passed",
        "test_fail[2]": "refused",
        "test_skip": "skipped",
        "test_crash": "crashed",
        "test_slow": "timeout",
        "test_stuck_outside_python": "timeout",
        "test_after_crash": "passed",
    }
    assert report.meta["suite"]["version"] == "9.9.9"
    assert report.meta["suite"]["commit"].startswith("unknown")
    assert (tmp_path / "work/src/python/test/unit/language/helper.py").is_file()
    assert sorted(e.split()[0] for e in report.errors()) == ["CRASHED", "TIMEOUT", "TIMEOUT"]
    assert "watchdog" in next(r.message for r in report.results if r.id.endswith("test_stuck_outside_python"))


def test_cli_missing_source_and_bad_manifest(tmp_path, capsys):
    from triton_backend_sdk.cli import main

    bad = tmp_path / "bad.txt"
    bad.write_text("test_core.py::test_a*  # todo: later\n")
    src = _fake_tree(tmp_path / "triton")
    assert main(["upstream-tests", "--triton-src", str(src), "--backend", "cpu_ref", "--manifest", str(bad)]) == 2
    assert "not a by-design reason" in capsys.readouterr().err
    assert main(["upstream-tests", "--triton-src", str(tmp_path / "nothing"), "--backend", "cpu_ref"]) == 2
    assert "neither a Triton checkout" in capsys.readouterr().err


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no Triton git mirror at {MIRROR}")
def test_stage_from_git_mirror_at_rev(tmp_path):
    cwd, paths, info = stage(MIRROR, tmp_path, rev=REV_37)
    assert paths == [f"test/unit/language/{f}" for f in ("test_core.py", "test_standard.py", "test_random.py")]
    assert (info.commit, info.version) == (REV_37, "3.7.0")
    expected = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "show", f"{REV_37}:python/test/unit/language/test_core.py"],
        check=True,
        capture_output=True,
    ).stdout
    assert (cwd / "test/unit/language/test_core.py").read_bytes() == expected
    # 3.7.0 keeps the device fixture in python/test/conftest.py; 3.8.0 in python/conftest.py.
    assert not (cwd / "conftest.py").exists() and "def device" in (cwd / "test/conftest.py").read_text()
    _, _, main_info = stage(MIRROR, tmp_path / "main", rev=REV)
    assert (main_info.commit, main_info.version) == (REV, "3.8.0")
    assert "def device" in (tmp_path / "main/python/conftest.py").read_text()


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no Triton git mirror at {MIRROR}")
def test_cli_real_upstream_tests_on_cpu_ref(tmp_path):
    """A handful of Triton's own test_bin_op cases on cpu_ref, through the CLI in a subprocess."""
    out = tmp_path / "r.json"
    junit = tmp_path / "r.xml"
    cmd = [
        sys.executable,
        "-m",
        "triton_backend_sdk.cli",
        "upstream-tests",
        "--triton-src",
        str(MIRROR),
        "--rev",
        REV,
        "--backend",
        "cpu_ref",
        "-k",
        "test_bin_op and float32 and +",
        "--sample",
        "5",
        "--workers",
        "1",
        "--timeout",
        "120",
        "--json",
        str(out),
        "--junit",
        str(junit),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["totals"]["passed"] >= 5 and data["totals"]["passed"] == len(data["tests"])
    assert data["meta"]["suite"]["commit"] == REV and data["meta"]["suite"]["version"] == "3.8.0"
    assert data["meta"]["triton_wheel"] != "not installed"
    assert all("test_bin_op[" in t["id"] and "float32" in t["id"] for t in data["tests"])
    assert junit.is_file() and "testcase" in junit.read_text()


def test_missing_pytest_timeout_is_named(monkeypatch, tmp_path):
    import importlib.util

    from triton_backend_sdk.upstream import runner as runner_mod

    real = importlib.util.find_spec
    monkeypatch.setattr(runner_mod.importlib.util, "find_spec", lambda n: None if n == "pytest_timeout" else real(n))
    with pytest.raises(runner_mod.RunError, match=r"pip install pytest-timeout"):
        run(str(_fake_tree(tmp_path)), "x", files=("test_fake.py",), echo=False)


def test_sample_offset_and_ids_file_pick_disjoint_halves(tmp_path):
    """Two runs of every 2nd test, offsets 0 and 1, cover the suite once; --ids reruns exactly the listed tests."""
    src = _fake_tree(tmp_path / "triton")
    fast = "not test_crash and not slow and not stuck"
    seen = []
    for offset in (0, 1):
        report = run(
            str(src),
            "fake_be",
            files=("test_fake.py",),
            workers=0,
            timeout=3,
            k=fast,
            sample=2,
            offset=offset,
            work_dir=str(tmp_path / f"w{offset}"),
            echo=False,
        )
        assert report.meta["offset"] == offset
        seen.append({r.id.split("::")[1] for r in report.results})
    assert not seen[0] & seen[1]
    assert seen[0] | seen[1] == {"test_pass", "test_fail[1]", "test_fail[2]", "test_skip", "test_after_crash"}
    ids = tmp_path / "ids.txt"
    ids.write_text("test/unit/language/test_fake.py::test_fail[2]\ntest/unit/language/test_fake.py::test_pass\n")
    report = run(
        str(src),
        "fake_be",
        files=("test_fake.py",),
        workers=0,
        timeout=3,
        ids_file=str(ids),
        work_dir=str(tmp_path / "wi"),
        echo=False,
    )
    assert {r.id.split("::")[1]: r.outcome for r in report.results} == {"test_pass": "passed", "test_fail[2]": "failed"}


def test_version_conditioned_entries(tmp_path):
    """`version-skew[triton<3.7]` is an entry under an older wheel only (the H200's 3.6), no entry under 3.9; an
    interrupted run's empty <testcase/> elements are counted as unfinished, not as passed tests named ''."""
    text = (
        "test_standard.py::test_squeeze*  # version-skew[triton<3.7]: tl.squeeze is newer than the 3.6 wheel\n"
        "test_core.py::test_ttgir*  # gpu-ir: reads TTGIR\n"
    )
    old, new = Manifest.parse(text), Manifest.parse(text)
    old.triton_version, new.triton_version = "3.6.0", "3.9.0"
    sq = "test/unit/language/test_standard.py::test_squeeze[shape0-0]"
    assert old.match(sq).category == "version-skew" and new.match(sq) is None
    assert len(old.active()) == 2 and len(new.active()) == 1 and new.by_category() == {"gpu-ir": 1}
    assert old.entries[0].describe().startswith("test_standard.py::test_squeeze*  # version-skew[triton<3.7]:")
    with pytest.raises(ManifestError, match="only a version-skew entry"):
        Manifest.parse("test_core.py::test_x  # gpu-ir[triton<3.7]: no\n")
    xml = tmp_path / "j.xml"
    xml.write_text(
        '<testsuites><testsuite name="pytest">'
        + _case("test_add[1]")
        + '<testcase classname="" name="" time="0"/><testcase/>'
        + "</testsuite></testsuites>"
    )
    report = classify(xml, new, [CORE])
    assert [r.id.split("::")[1] for r in report.results] == ["test_add[1]"]
    assert report.meta["unfinished_testcases"] == 2


def test_passing_inexact_reference_entry_is_not_stale(tmp_path):
    """torch's CPU bf16 matmul (the reference) depends on the host's oneDNN ISA: an inexact-reference entry that
    passes on this host is no stale entry; a gpu-ir one is."""
    xml = tmp_path / "j.xml"
    xml.write_text(
        '<testsuites><testsuite name="pytest">'
        + _case("test_dot[1]")
        + _case("test_ttgir[1]")
        + "</testsuite></testsuites>"
    )
    manifest = Manifest.parse(
        "test_core.py::test_dot[1]  # inexact-reference: torch's bf16 reference is 3 ulp off on AVX2 hosts\n"
        "test_core.py::test_ttgir[1]  # gpu-ir: reads TTGIR\n"
    )
    report = classify(xml, manifest, [CORE])
    assert report.stale == ["test_core.py::test_ttgir[1]  # gpu-ir: reads TTGIR"]
