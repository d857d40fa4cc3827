"""The conformance runner: references, golden records, reports (JSON, JUnit, table, closing line), the CLI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
import torch
from triton_backend_sdk import cli
from triton_backend_sdk.conformance import goldens as G
from triton_backend_sdk.conformance import run
from triton_backend_sdk.conformance.cases import EXACT, ulp


def test_golden_round_trip_small_and_large():
    g = torch.Generator().manual_seed(3)
    small = torch.randn(100, generator=g)
    large = torch.randn(50_000, generator=g)
    gs = G.GoldenSet(meta={"gpu": "test"})
    gs.add("c", "float32", (100,), 0, "pass", [small, large])
    rec = gs.get("c", "float32", (100,), 0)
    assert "data" in rec["outputs"][0] and "positions" in rec["outputs"][1]
    assert G.compare(rec, [small.clone(), large.clone()], EXACT)[0]
    bumped = large.clone()
    bumped[rec["outputs"][1]["positions"][5]] += 1.0
    ok, _, msg = G.compare(rec, [small, bumped], EXACT)
    assert not ok and "sampled" in msg
    off = small.clone()
    off[7] = torch.nextafter(off[7], torch.tensor(float("inf")))
    assert not G.compare(rec, [off, large], EXACT)[0]
    assert G.compare(rec, [off, large], G.golden_tolerance(ulp(0.5)))[0]


def test_golden_set_save_load(tmp_path):
    gs = G.GoldenSet(meta={"triton": "x"})
    gs.add("c", "int32", (4,), 1, "error", [], "boom")
    path = str(tmp_path / "g.json.gz")
    gs.save(path)
    back = G.GoldenSet.load(path)
    assert back.meta == {"triton": "x"} and back.get("c", "int32", (4,), 1)["message"] == "boom"


def test_shipped_goldens_come_from_a_cuda_gpu():
    gs = G.GoldenSet.load()
    assert "H200" in gs.meta["gpu"] and gs.meta["triton"]
    assert len(gs.records) > 1000


@pytest.mark.parametrize("reference", ["torch", "interpreter", "cuda-golden"])
def test_run_against_each_reference(backend, reference):
    report = run(backend=backend, reference=reference, filter="binary_add float32")
    assert report.results and report.ok, report.failures()
    assert report.closing_line() == f"{len(report.results)} passed, 0 failed, 0 unsupported"
    assert "arith.add" in report.table()


def test_cuda_live_without_a_gpu_fails_loudly(backend):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the live comparison would run")
    report = run(backend=backend, reference="cuda-live", filter="binary_add float32 1000")
    assert report.failed == len(report.results) > 0
    assert "no CUDA GPU" in report.results[0].message


def test_cli_reports(backend, tmp_path, capsys):
    j, x = tmp_path / "r.json", tmp_path / "r.xml"
    rc = cli.main(
        ["conformance", "--backend", backend, "-k", "binary_sub int32", "--quiet", "--json", str(j), "--junit", str(x)]
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0
    data = json.loads(j.read_text())
    n = data["summary"]["passed"]
    assert n > 0 and out[-1] == f"{n} passed, 0 failed, 0 unsupported"
    suite = ET.parse(x).getroot()
    assert suite.get("tests") == str(n) and suite.get("failures") == "0"
