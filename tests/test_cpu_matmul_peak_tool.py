"""tools/cpu_matmul_peak.py: its FMA probe, its operands-in-cache kernel (checked against torch for what it computes)
and a whole small run."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
import triton
import triton_backend_sdk

_spec = importlib.util.spec_from_file_location(
    "cpu_matmul_peak", Path(__file__).parents[1] / "tools" / "cpu_matmul_peak.py"
)
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)

needs_cc = pytest.mark.skipif(
    shutil.which("cc") is None or sys.platform != "linux" or not Path("/proc/cpuinfo").exists(),
    reason="the FMA probe is built with the system C compiler for the x86 flags in /proc/cpuinfo",
)


@pytest.fixture(autouse=True)
def _cpu_ref():
    triton_backend_sdk.use("cpu_ref")


@pytest.mark.parametrize("hot_a, hot_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_the_hot_kernel_reads_the_first_k_tile_again(hot_a: int, hot_b: int) -> None:
    m, n, k, bk = 72, 40, 80, 16
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.empty(m, n)
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    tool.matmul_hot_kernel[grid](*args, BM=32, BN=32, BK=bk, GROUP_M=2, HOT_A=hot_a, HOT_B=hot_b)
    steps = range(0, k, bk)
    a_tiles = [a[:, :bk] if hot_a else a[:, s : s + bk] for s in steps]
    b_tiles = [b[:bk] if hot_b else b[s : s + bk] for s in steps]
    want = sum(x @ y for x, y in zip(a_tiles, b_tiles))
    torch.testing.assert_close(c, want, rtol=1e-4, atol=1e-4)


@needs_cc
def test_the_probe_reports_a_rate(tmp_path: Path) -> None:
    import subprocess

    exe = tool.build_probe(tmp_path)
    out = subprocess.run([str(exe), "2", "200000"], capture_output=True, text=True, check=True).stdout
    assert 1.0 < float(out) < 1e5


@needs_cc
def test_a_small_run_writes_every_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["cpu_matmul_peak", "--rounds", "1", "--size", "96", "--tiles", "32x32x16", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    tool.main()
    data = json.loads((tmp_path / "peak.json").read_text())
    sides = {r["side"]: r for r in data["rows"]}
    assert set(sides) == {
        "FMA peak",
        "cpu_ref",
        "cpu_ref, no operand reuse",
        "cpu_ref, A in cache",
        "cpu_ref, B in cache",
        "cpu_ref, A and B in cache",
        "torch.mm (MKL)",
        "numpy (OpenBLAS)",
    }
    assert all(r["median_gflops"] > 0 for r in sides.values())
    assert sides["FMA peak"]["median_fraction_of_peak"] == pytest.approx(1.0)
    assert "| cpu_ref |" in (tmp_path / "peak.md").read_text()
