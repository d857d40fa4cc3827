"""Run the benchmarks and rewrite the results table in benchmarks/README.md.

    python -m benchmarks.report [-k FILTER]             # cpu_ref vs torch (test_*.py)
    python -m benchmarks.report --opencl [-k FILTER]    # opencl on this machine's OpenCL device (bench_opencl.py)

Medians from interleaved runs; ratio = peer time / our time (> 1: faster than the peer).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
OPENCL_BEGIN, OPENCL_END = "<!-- opencl-results:begin -->", "<!-- opencl-results:end -->"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return "" if v is None else str(v)


def render(data: dict, begin: str = BEGIN, end: str = END) -> str:
    rows = ["| case | ours (ms) | peer (ms) | ratio peer/ours | other |", "|---|---|---|---|---|"]
    for b in data["benchmarks"]:
        e = b.get("extra_info", {})
        other = ", ".join(f"{k}={_fmt(v)}" for k, v in e.items() if k not in ("ours_ms", "peer_ms", "ratio"))
        rows.append(
            f"| {b['name']} | {_fmt(e.get('ours_ms'))} | {_fmt(e.get('peer_ms'))} | {_fmt(e.get('ratio'))} | {other} |"
        )
    cpu = data.get("machine_info", {}).get("cpu", {}).get("brand_raw", platform.processor())
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{begin}\nMeasured {when} on {cpu}, 2 threads.\n\n" + "\n".join(rows) + f"\n{end}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("-k", default=None)
    p.add_argument("--opencl", action="store_true", help="run bench_opencl.py, write the opencl table")
    args = p.parse_args(argv)
    begin, end = (OPENCL_BEGIN, OPENCL_END) if args.opencl else (BEGIN, END)
    target = os.path.join(HERE, "bench_opencl.py") if args.opencl else HERE
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [sys.executable, "-m", "pytest", target, "-q", "-p", "no:cacheprovider", f"--benchmark-json={out}"]
        if args.k:
            cmd += ["-k", args.k]
        rc = subprocess.call(cmd)
        if not os.path.exists(out):
            return rc or 1
        with open(out) as f:
            data = json.load(f)
    table = render(data, begin, end)
    readme = os.path.join(HERE, "README.md")
    text = f"# Benchmarks\n\n{begin}\n{end}\n"
    if os.path.exists(readme):
        with open(readme) as f:
            text = f.read()
    if begin in text:
        text = text[: text.index(begin)] + table + text[text.index(end) + len(end) :]
    else:
        text += "\n" + table + "\n"
    with open(readme, "w") as f:
        f.write(text)
    print(table)
    return rc


if __name__ == "__main__":
    sys.exit(main())
