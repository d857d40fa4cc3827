"""The `triton-sdk` command's contract: user mistakes end in one line on stderr with exit status 2 (no traceback),
`--version`, `--json` listings, and filters that select nothing fail instead of reporting an empty success."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton
import triton_backend_sdk
from triton.backends import backends
from triton_backend_sdk import cli

#: TTIR the reader accepts but no backend can lower: the compile must fail by name, not by traceback
UNLOWERABLE_TTIR = """module {
  tt.func public @k(%arg0: !tt.ptr<f32>) {
    %0 = bogus.op %arg0 : f32
    tt.return
  }
}
"""


def _command() -> list[str]:
    script = Path(sys.executable).with_name("triton-sdk")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "triton_backend_sdk.cli"]


def _files(tmp_path: Path) -> dict[str, str]:
    binary = tmp_path / "binary.ttir"
    binary.write_bytes(b"\x00\xff\xfe not text")
    good = tmp_path / "k.ttir"
    good.write_text(UNLOWERABLE_TTIR)
    return {"BINARY": str(binary), "TTIR": str(good), "DIR": str(tmp_path), "MISSING": str(tmp_path / "nope.ttir")}


USER_ERRORS = [
    (["demo", "--backend", "nope"], "unknown backend 'nope'; registered: "),
    (["demo", "--size", "abc"], "argument --size: invalid int value: 'abc'"),
    (["demo", "--size", "0"], "argument --size: must be >= 1, got 0"),
    (["compile", "MISSING"], "no such file"),
    (["compile", "DIR"], "is a directory"),
    (["compile", "BINARY"], "is not a text file"),
    (["compile", "TTIR", "--backend", "nope"], "unknown backend 'nope'"),
    (["conformance", "--backend", "nope"], "unknown backend 'nope'"),
    (["conformance", "--seed", "-1"], "argument --seed: must be >= 0"),
    (["conformance", "--reference", "gpu"], "argument --reference: invalid choice: 'gpu'"),
    (["conformance", "--goldens", "MISSING", "--reference", "cuda-golden"], "--goldens"),
    (["conformance", "-k", "binary_add", "--json", "MISSING/r.json"], "--json"),
    (["upstream-tests", "--backend", "nope", "--from-junit", "TTIR"], "unknown backend 'nope'"),
    (["upstream-tests", "--backend", "cpu_ref", "--from-junit", "MISSING"], "--from-junit"),
    (["upstream-tests", "--backend", "cpu_ref", "--ids", "MISSING"], "--ids"),
    (["upstream-tests", "--backend", "cpu_ref", "--sample", "0"], "argument --sample: must be >= 1"),
    (["upstream-tests", "--backend", "cpu_ref", "--sample", "2", "--sample-offset", "2"], "must be below --sample"),
    (["upstream-tests", "--backend", "cpu_ref", "--workers", "-1"], "argument --workers: must be >= 0"),
    (["upstream-tests", "--backend", "cpu_ref", "--timeout", "0"], "argument --timeout: must be > 0"),
    (["upstream-tests", "--backend", "cpu_ref"], "--triton-src is required"),
    (["no-such-command"], "invalid choice: 'no-such-command'"),
    ([], "the following arguments are required: cmd"),
]


@pytest.mark.parametrize("argv,message", USER_ERRORS, ids=[" ".join(a) or "(none)" for a, _ in USER_ERRORS])
def test_user_error_is_one_line_with_exit_2(argv, message, tmp_path, capsys):
    files = _files(tmp_path)
    argv = [files.get(a.split("/")[0], a.split("/")[0]) + a[len(a.split("/")[0]) :] for a in argv]
    before = os.environ.get("TRITON_DEFAULT_BACKEND")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("triton-sdk") and message in lines[0], err
    assert os.environ.get("TRITON_DEFAULT_BACKEND") == before, "a refused command must not select a backend"


@pytest.mark.parametrize(
    "argv,message", [(["demo", "--backend", "nope"], "unknown backend 'nope'"), (["compile", "MISSING"], "no such")]
)
def test_console_script_prints_no_traceback(argv, message, tmp_path):
    argv = [_files(tmp_path).get(a, a) for a in argv]
    r = subprocess.run([*_command(), *argv], check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_compile_refusal_is_named_with_exit_2(tmp_path, capsys):
    assert cli.main(["compile", _files(tmp_path)["TTIR"], "--backend", "cpu_ref"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("triton-sdk compile: error: [cpu_ref] no lowering rule for op 'bogus.op'"), err
    assert "Traceback" not in err


def test_non_sdk_backend_is_refused_where_only_sdk_backends_work(tmp_path, capsys):
    other = sorted(n for n, b in backends.items() if not hasattr(b.compiler, "describe"))
    if not other:
        pytest.skip("no non-SDK Triton backend is registered")
    assert cli.main(["compile", _files(tmp_path)["TTIR"], "--backend", other[0]]) == 2
    assert f"backend {other[0]!r} is not an SDK backend; SDK backends: " in capsys.readouterr().err


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"triton-sdk {triton_backend_sdk.__version__} (SDK API {triton_backend_sdk.API_VERSION})")
    assert f"triton {triton.__version__}" in out


def test_devices_json(capsys):
    assert cli.main(["devices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["triton"] == triton.__version__
    rows = {r["name"]: r for r in data["backends"]}
    assert sorted(rows) == sorted(backends)
    cpu = rows["cpu_ref"]
    d = backends["cpu_ref"].compiler.describe(None)
    assert cpu["sdk"] is True and cpu["active"] is bool(backends["cpu_ref"].driver.is_active())
    assert cpu["descriptor"]["arch"] == d.arch and cpu["descriptor"]["vector_width_bits"] == d.vector_width_bits
    assert cpu["descriptor"]["features"] == list(d.features)
    assert cpu["descriptor"]["supported_dtypes"] == sorted(d.supported_dtypes)
    assert all(r["sdk"] is hasattr(backends[n].compiler, "describe") for n, r in rows.items())


def test_devices_text_still_lists_every_backend(capsys):
    assert cli.main(["devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(ln.split()[0] == "cpu_ref" and "arch=" in ln and "active=" in ln for ln in lines)
    assert {ln.split()[0] for ln in lines if not ln.startswith(" ")} == set(backends)


def test_plugins_json(capsys):
    rc = cli.main(["plugins", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["sdk_version"] == triton_backend_sdk.__version__ and data["api_version"] == 1
    mine = {(e["kind"], e["name"]): e for e in data["entries"]}
    assert mine[("backend", "cpu_ref")]["api"] == "1-1"
    assert mine[("backend", "opencl")]["version"] == triton_backend_sdk.__version__
    assert rc == (1 if any(e.get("error") for e in data["entries"]) else 0)


def test_conformance_filter_that_selects_nothing_fails(capsys):
    assert cli.main(["conformance", "-k", "no_such_case_anywhere", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "-k 'no_such_case_anywhere' selects none of the" in captured.err
    assert captured.out == "", "nothing runs, so no empty report is printed"


def test_conformance_filter_words_must_all_match(capsys):
    """Each word of -k must occur: a real case with a dtype it does not have selects nothing."""
    assert cli.main(["conformance", "-k", "binary_add complex128", "--quiet"]) == 2
    assert "selects none of the" in capsys.readouterr().err


def test_upstream_filter_that_selects_nothing_fails(tmp_path, capsys):
    pytest.importorskip("pytest_timeout")
    tree = tmp_path / "triton" / "python" / "test" / "unit" / "language"
    tree.mkdir(parents=True)
    (tmp_path / "triton/python/triton").mkdir()
    (tmp_path / "triton/python/triton/__init__.py").write_text("__version__ = '9.9.9'\n")
    (tmp_path / "triton/python/conftest.py").write_text(
        "def pytest_addoption(parser):\n    parser.addoption('--device', default='cuda')\n"
    )
    (tree / "test_one.py").write_text("def test_a():\n    pass\n")
    argv = ["upstream-tests", "--triton-src", str(tmp_path / "triton"), "--backend", "cpu_ref", "--workers", "0"]
    assert cli.main([*argv, "--files", "test_one.py", "-k", "matches_nothing"]) == 2
    assert "no test matched (-k 'matches_nothing')" in capsys.readouterr().err
