"""`triton-sdk bench`'s contract (never its speed: unit tests time nothing): the report files and their fields at
the smoke sizes, user mistakes as one line with exit status 2, and the H200 JSON rendered."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from triton_backend_sdk import cli
from triton_backend_sdk.bench.cases import CASES, MATMUL_TILES, autotuned_tiles

REPO = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _valid_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 1000
    from matplotlib.image import imread

    assert imread(path).shape[0] > 100


def test_smoke_run_writes_json_md_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["bench", "--sizes", "smoke", "--backend", "cpu_ref", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "roofline: triad" in err
    report = json.loads((out / "bench.json").read_text())
    host = report["host"]
    assert host["cpu"]["model_name"] and host["cores"] >= 1 and host["threads"] >= 1
    assert "llc_bytes" in host and report["date"].endswith("UTC") and report["mode"] == "smoke"
    assert {"sdk", "triton", "torch", "numpy", "python"} <= set(report["versions"])
    assert report["roofline"]["triad"]["gbps"] > 0 and report["roofline"]["sgemm"]["gflops"] > 0
    results = {(r["case"], r["backend"]): r for r in report["results"]}
    assert set(results) == {(c.name, "cpu_ref") for c in CASES}
    for (name, _), r in results.items():
        assert "error" not in r, r.get("error")
        assert r["check"]["ok"] and r["check"]["max_abs_err"] >= 0
        assert r["ours"]["median_ms"] > 0 and r["ours"]["spread"] >= 1 and r["size"] and r["rate"] > 0
        assert r["peers"]["torch"]["ratio"] > 0
        assert (r["roofline_fraction"] is None) == (r["metric"] == "us/launch")
        assert sum(line.split()[2:4] == [name, "cpu_ref"] for line in err.splitlines() if line.startswith("[")) == 1
    assert {"torch", "torch.compile", "interpreter"} <= set(results[("softmax", "cpu_ref")]["peers"])
    numpy = results[("matmul_fp32", "cpu_ref")]["peers"]["numpy"]
    assert numpy["ratio"] > 0 and "openblas_core" in numpy
    assert results[("attention_fwd", "cpu_ref")]["peers"]["interpreter"]["ratio"] > 0
    tiles = {f"tiles {m}x{n}x{k}" for m, n, k in MATMUL_TILES}
    for name in ("matmul_fp32", "matmul_fp16_acc32"):  # autotuned, and the choice is in the report
        assert results[(name, "cpu_ref")]["config"] in tiles
        assert results[(name, "cpu_ref")]["config"] in results[(name, "cpu_ref")]["size_label"]
    md = (out / "bench.md").read_text()
    assert "## cpu_ref" in md and "Roofline (same run)" in md and report["versions"]["triton"] in md
    header = next(line for line in md.splitlines() if line.startswith("| case |"))
    assert " torch | torch.compile | inductor_cpp | numpy |" in header  # every peer a case brings has its column
    for c in CASES:
        assert sum(line.startswith(f"| {c.name} |") for line in md.splitlines()) == 1
    _valid_png(out / "bench.png")


def test_matmul_tiles_are_the_fastest_candidate():
    """`autotuned_tiles` keeps the candidate whose calls are fastest, whichever position it has in the list."""
    import time

    for fastest in (MATMUL_TILES[0], MATMUL_TILES[-1]):
        assert autotuned_tiles(lambda *t, f=fastest: time.sleep(0 if t == f else 0.002)) == fastest


def test_matmul_tiles_are_timed_in_interleaved_rounds():
    """After each candidate's warm-up and first timing, the candidates are timed once per round, the rounds in turn
    (a slow stretch of the host then falls on all of them); the one whose best call is fastest is picked, though
    its first calls were the slowest of all."""
    from triton_backend_sdk.bench.cases import AUTOTUNE_ROUNDS

    calls: list[tuple[int, int, int]] = []
    fast = MATMUL_TILES[1]

    def run(*t):
        calls.append(t)
        time.sleep(0.006 if t == fast and calls.count(fast) <= 2 else 0.002 if t != fast else 0)

    assert autotuned_tiles(run) == fast
    assert calls[-len(MATMUL_TILES) * (AUTOTUNE_ROUNDS - 1) :] == list(MATMUL_TILES) * (AUTOTUNE_ROUNDS - 1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--backend", "no_such_backend"], "unknown backend 'no_such_backend'; SDK backends: "),
        (["-k", "no_such_case"], "-k 'no_such_case' selects no case; cases: vector_add"),
        (["--render-h200", "/no/such/dir"], "--render-h200 /no/such/dir: no such directory"),
    ],
)
def test_user_error_is_one_line_with_exit_2(argv, message, tmp_path, capsys):
    assert cli.main(["bench", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_console_script_unknown_backend_has_no_traceback(tmp_path):
    script = Path(sys.executable).with_name("triton-sdk")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "triton_backend_sdk.cli"]
    r = subprocess.run(
        [*command, "bench", "--backend", "nope", "--out", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown backend 'nope'" in r.stderr


def test_missing_matplotlib_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    assert cli.main(["bench", "--sizes", "smoke", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install matplotlib" in err


def test_render_h200_from_the_committed_json(tmp_path, capsys):
    src = tmp_path / "h200"
    shutil.copytree(REPO / "benchmarks/results/h200", src, ignore=shutil.ignore_patterns("bench.md", "bench.png"))
    assert cli.main(["bench", "--render-h200", str(src), "--out", str(tmp_path / "r")]) == 0
    md = (tmp_path / "r" / "bench.md").read_text()
    cuda = {r["name"]: r["device_ms"] for r in json.loads((src / "bench_cuda.json").read_text())}
    for rec in json.loads((src / "bench_opencl.json").read_text()):  # whichever run is committed: ratios from it
        (row,) = [line for line in md.splitlines() if line.startswith(f"| {rec['name']} |")]
        assert f"| {cuda[rec['name']] / rec['device_ms']:.2f} |" in row
    assert re.search(r"Run of commit \w+, \d{4}-\d\d-\d\d;", md) and "NVIDIA H200" in md
    _valid_png(tmp_path / "r" / "bench.png")


def test_render_h200_takes_a_json_with_meta(tmp_path, capsys):
    rec = {"name": "k", "work": 1, "ok": True, "max_err": 0.0}
    (tmp_path / "bench_cuda.json").write_text(json.dumps([{**rec, "backend": "cuda", "device_ms": 2.0}]))
    newer = {"meta": {"date": "2027-01-01", "versions": {"triton": "3.9"}}, "results": [{**rec, "backend": "opencl"}]}
    newer["results"][0]["device_ms"] = 1.0
    (tmp_path / "bench_opencl.json").write_text(json.dumps(newer))
    assert cli.main(["bench", "--render-h200", str(tmp_path), "--out", str(tmp_path)]) == 0
    md = (tmp_path / "bench.md").read_text()
    assert "2027-01-01" in md and "triton 3.9" in md and "| k | 2.000 |" in md and "| 2.00 |" in md


def test_render_h200_shows_the_rerun_time_and_its_ratio(tmp_path):
    """A run with `rerun_ms` (ours again on its device buffers, back to back): its column and its own ratio to
    Triton-CUDA beside the first kernel time's; a run without it renders '-' there."""
    rec = {"work": 1, "ok": True, "max_err": 0.0}
    cuda = [{**rec, "name": n, "backend": "cuda", "device_ms": 0.08} for n in ("add", "old")]
    ours = [
        {**rec, "name": "add", "backend": "opencl", "device_ms": 0.1, "rerun_ms": 0.0842},
        {**rec, "name": "old", "backend": "opencl", "device_ms": 0.1},
    ]
    (tmp_path / "bench_cuda.json").write_text(json.dumps(cuda))
    (tmp_path / "bench_opencl.json").write_text(json.dumps(ours))
    assert cli.main(["bench", "--render-h200", str(tmp_path), "--out", str(tmp_path)]) == 0
    md = (tmp_path / "bench.md").read_text()
    (add,) = [line for line in md.splitlines() if line.startswith("| add |")]
    (old,) = [line for line in md.splitlines() if line.startswith("| old |")]
    assert "| 0.100 | 0.084 |" in add and "| 0.80 | 0.95 |" in add
    assert "| 0.100 | - |" in old and "| 0.80 | - |" in old
    _valid_png(tmp_path / "bench.png")


def test_render_h200_without_a_cuda_run_is_a_user_error(tmp_path, capsys):
    (tmp_path / "bench_opencl.json").write_text("[]")
    assert cli.main(["bench", "--render-h200", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "need bench_*.json files for 'cuda'" in capsys.readouterr().err


def test_backend_that_cannot_start_fails_its_cases_with_exit_1(tmp_path, capsys, monkeypatch):
    import triton_backend_sdk

    def refuse(name: str) -> None:
        raise RuntimeError(f"{name}: no device (test)")

    monkeypatch.setattr(triton_backend_sdk, "use", refuse)
    argv = ["bench", "--sizes", "smoke", "-k", "vector_add", "--backend", "cpu_ref", "--no-interpreter"]
    assert cli.main([*argv, "--out", str(tmp_path)]) == 1
    assert "backend cpu_ref did not start: RuntimeError: cpu_ref: no device (test)" in capsys.readouterr().err
    (rec,) = json.loads((tmp_path / "bench.json").read_text())["results"]
    assert rec["case"] == "vector_add" and "no device" in rec["error"]
    assert "| vector_add | - | ERROR |" in (tmp_path / "bench.md").read_text()
    _valid_png(tmp_path / "bench.png")
