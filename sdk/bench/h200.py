"""Rendering a GPU run of tools/gpu/opencl_h200.py (`bench_<backend>.json` files: one record per kernel with
`name`, `backend`, `device_ms`, `ok`, `max_err`, `work` and optionally `torch_ms`, `e2e_ms`, `first_call_s`) into
bench.md and bench.png: each SDK backend's kernel time against Triton's CUDA backend (and torch on CUDA), as
CUDA time / our time (> 1: ours faster), with what the folder records of the run (date, commit, device, versions).

A file may also be an object `{"meta": {...}, "results": [...]}`: its meta (versions, date) is shown as given.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any

from .report import ChartRow, plot

#: the backend the others are compared with
REFERENCE = "cuda"


def load(src: str) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, Any]]:
    """{backend: {kernel name: record}} from src/bench_*.json, and the meta the files and the folder give."""
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    meta: dict[str, Any] = {}
    for path in sorted(glob.glob(os.path.join(src, "bench_*.json"))):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict):
            meta.update(data.get("meta", {}))
            data = data.get("results", [])
        for rec in data:
            runs.setdefault(rec["backend"], {})[rec["name"]] = rec
    meta.update({k: v for k, v in _folder_meta(src).items() if k not in meta})
    return runs, meta


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _folder_meta(src: str) -> dict[str, Any]:
    """The run's commit and date from opencl_vs_cuda.md ("Run of commit X (session DATE"), the selected device
    from devices.txt, package versions from env.txt (pip list lines) where the run left one."""
    meta: dict[str, Any] = {}
    md = _read(os.path.join(src, "opencl_vs_cuda.md"))
    m = re.search(r"Run of commit (\w+) \(session (\d{4}-\d{2}-\d{2})", md)
    if m:
        meta["commit"], meta["date"] = m.group(1), m.group(2)
    devices = _read(os.path.join(src, "devices.txt")) or md
    m = re.search(r"^selected: (.+?) ->", devices, re.MULTILINE)
    if m:
        meta["device"] = m.group(1)
    m = re.search(r"^\[\d+:\d+\] (NVIDIA[^\n]*)", devices, re.MULTILINE)
    if m:
        meta["opencl"] = m.group(1).strip()
    env = _read(os.path.join(src, "env.txt"))
    found = dict(re.findall(r"^(triton|torch|numpy|pytest)\s+(\S+)\s*$", env, re.MULTILINE))
    if found:
        meta["versions"] = found
    return meta


def _ms(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"


def _err(v: object) -> str:
    return f"{v:.1e}" if isinstance(v, (int, float)) else "-"


def _fmt(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}"


def _ratio(num: object, den: object) -> float | None:
    return num / den if isinstance(num, (int, float)) and isinstance(den, (int, float)) and den > 0 else None


def rows(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Per backend other than the reference: (kernel, {ours, cuda, ratios}) for each kernel either has."""
    ref = runs.get(REFERENCE, {})
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for backend, recs in runs.items():
        if backend == REFERENCE:
            continue
        for name in sorted(set(recs) | set(ref)):
            ours, cuda = recs.get(name, {}), ref.get(name, {})
            entry = {
                "ours": ours,
                "cuda": cuda,
                "triton-cuda": _ratio(cuda.get("device_ms"), ours.get("device_ms")),
                "torch-cuda": _ratio(cuda.get("torch_ms"), ours.get("device_ms")),
                "triton-cuda re-run": _ratio(cuda.get("device_ms"), ours.get("rerun_ms")),
            }
            out.setdefault(backend, []).append((name, entry))
    return out


def markdown(runs: dict[str, dict[str, dict[str, Any]]], meta: dict[str, Any]) -> str:
    versions = meta.get("versions")
    vtext = (
        ", ".join(f"{k} {v}" for k, v in versions.items())
        if isinstance(versions, dict)
        else "not recorded in these files (the run's env.txt lists them where it was kept)"
    )
    lines = [
        f"# SDK backends on {meta.get('device', 'the GPU')} vs Triton's CUDA backend",
        "",
        (
            f"Run of commit {meta.get('commit', '?')}, {meta.get('date', 'date not recorded')}; OpenCL device: "
            f"{meta.get('opencl', meta.get('device', '?'))}; versions: {vtext}. Rendered by "
            "`triton-sdk bench --render-h200 DIR --out DIR` from the bench_*.json files of tools/gpu/opencl_h200.py."
        ),
        "",
        (
            "Ratio = CUDA time / our kernel time (> 1: ours faster). Our time is the kernel alone (OpenCL "
            "profiling events); Triton-CUDA's and torch's are `triton.testing.do_bench`. Our launch time includes "
            "copying the CPU tensors to the GPU and back (opencl launches take host tensors). Where the run has "
            "them, the re-run columns time our kernel again on its device buffers, back to back with the L2 "
            "cleared before each run as do_bench clears it, the mean of the runs as do_bench's "
            "(`DeviceRuntime.rerun_last`): our first time is taken right after each launch's copies, on a GPU "
            "that idled through them."
        ),
    ]
    for backend, entries in rows(runs).items():
        lines += [
            "",
            f"## {backend}",
            "",
            (
                "| kernel | Triton CUDA ms | torch CUDA ms | ours kernel ms | ours re-run ms | ours launch ms (with "
                "copies) | Triton-CUDA / ours | Triton-CUDA / ours re-run | torch-CUDA / ours | ok cuda/ours "
                "| max err cuda/ours |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, e in entries:
            o, c = e["ours"], e["cuda"]
            lines.append(
                f"| {name} | {_ms(c.get('device_ms'))} | {_ms(c.get('torch_ms'))} | {_ms(o.get('device_ms'))} | "
                f"{_ms(o.get('rerun_ms'))} | {_ms(o.get('e2e_ms'))} | {_fmt(e['triton-cuda'])} | "
                f"{_fmt(e['triton-cuda re-run'])} | {_fmt(e['torch-cuda'])} | {c.get('ok', '-')}/{o.get('ok', '-')} | "
                f"{_err(c.get('max_err'))}/{_err(o.get('max_err'))} |"
            )
        for name, e in entries:
            for side in ("cuda", "ours"):
                if e[side].get("error"):
                    lines.append(f"\n{side} {name} error: {e[side]['error'][:300]}")
    return "\n".join(lines) + "\n"


def render(src: str, out_dir: str) -> list[str]:
    """bench.md and bench.png in `out_dir` from the bench_*.json files in `src`; their paths."""
    runs, meta = load(src)
    if REFERENCE not in runs or len(runs) < 2:
        raise ValueError(f"{src}: need bench_*.json files for {REFERENCE!r} and at least one other backend")
    md, png = os.path.join(out_dir, "bench.md"), os.path.join(out_dir, "bench.png")
    with open(md, "w") as f:
        f.write(markdown(runs, meta))
    panels: list[tuple[str, list[ChartRow]]] = []
    for backend, entries in rows(runs).items():
        keys = ("triton-cuda", "triton-cuda re-run", "torch-cuda")
        chart = [
            (name, {k: e[k] for k in keys if e[k] is not None or k != "triton-cuda re-run"}) for name, e in entries
        ]
        panels.append((f"{backend} on {meta.get('device', 'GPU')} (kernel time)", chart))
    plot(png, panels, f"SDK backends vs CUDA, commit {meta.get('commit', '?')}, {meta.get('date', '')}")
    return [md, png]
