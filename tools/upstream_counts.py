"""Regenerate the upstream-suite counts the README quotes: run Triton's language tests on each SDK backend with
`triton-sdk upstream-tests`, keep the reports in benchmarks/results/upstream/, and rewrite the README's table.

    .venv/bin/python tools/upstream_counts.py --triton-src /work/.mirror/lightseekorg+triton/repo --rev f4fca2c0b
    .venv/bin/python tools/upstream_counts.py --readme-only      # the table again from the committed reports

Each backend's run takes 25-60 minutes on 2 cores; `--backends opencl` runs one. The table lists per backend the
counts, the suite's commit and version, the wheel's version and the manifest's entries and refused tests by reason.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "upstream"
README = ROOT / "README.md"
BEGIN, END = "<!-- upstream-counts:begin -->", "<!-- upstream-counts:end -->"
OUTCOMES = ("passed", "failed", "refused", "skipped", "crashed", "timeout")


def run_backend(backend: str, src: str, rev: str | None, workers: int, timeout: int) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    report = RESULTS / f"{backend}.json"
    cmd = [
        sys.executable,
        "-m",
        "triton_backend_sdk.cli",
        "upstream-tests",
        "--triton-src",
        src,
        "--backend",
        backend,
        "--workers",
        str(workers),
        "--timeout",
        str(timeout),
        "--json",
        str(report),
        "--all-functions",
    ]
    cmd += ["--rev", rev] if rev else []
    with open(RESULTS / f"{backend}.txt", "w") as out:
        code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    data = report.read_bytes()
    with gzip.open(RESULTS / f"{backend}.json.gz", "wb", mtime=0) as z:
        z.write(data)
    report.unlink()
    print(f"{backend}: exit {code}; {RESULTS / (backend + '.txt')}")


def load(backend: str) -> dict:
    with gzip.open(RESULTS / f"{backend}.json.gz") as z:
        return json.load(z)


def refused_by_category(report: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in report["tests"]:
        if t["outcome"] == "refused":
            cat = t["reason"].split(":", 1)[0].strip() or "?"
            counts[cat] = counts.get(cat, 0) + 1
    return counts


def table(backends: list[str]) -> str:
    lines = [
        "| backend | passed | failed | refused (manifest) | skipped | crashed | timeout | minutes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for be in backends:
        r = load(be)
        m, t = r["meta"], r["totals"]
        lines.append(f"| {be} | " + " | ".join(str(t[o]) for o in OUTCOMES) + f" | {m['seconds'] / 60:.0f} |")
        suite = m["suite"]
        by_cat = ", ".join(f"{c} {n}" for c, n in sorted(r["manifest"]["by_category"].items()))
        refused = ", ".join(f"{c} {n}" for c, n in sorted(refused_by_category(r).items())) or "none"
        notes.append(
            f"- {be}: all {sum(t.values())} tests of the suite at {suite['commit'][:9]} (version {suite['version']}) "
            f"against the triton {m['triton_wheel']} wheel, {m['workers']} workers; manifest "
            f"`backends/{be}/upstream_expectations.txt`: {r['manifest']['entries']} entries ({by_cat}); "
            f"tests refused by reason: {refused}."
        )
    return "\n".join([*lines, "", *notes])


def rewrite_readme(backends: list[str]) -> None:
    text = README.read_text()
    block = f"{BEGIN}\n{table(backends)}\n{END}"
    if BEGIN not in text:
        raise SystemExit(f"{README} has no {BEGIN} ... {END} block")
    README.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.DOTALL))
    print(block)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--triton-src", help="Triton checkout or git dir (the suite)")
    p.add_argument("--rev", default=None)
    p.add_argument("--backends", nargs="+", default=["cpu_ref", "opencl"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--readme-only", action="store_true", help="only rewrite the README from the stored reports")
    a = p.parse_args()
    if not a.readme_only:
        if not a.triton_src:
            p.error("--triton-src is required unless --readme-only")
        for be in a.backends:
            run_backend(be, a.triton_src, a.rev, a.workers, a.timeout)
    shown = [be for be in ("cpu_ref", "opencl") if (RESULTS / f"{be}.json.gz").exists()]
    rewrite_readme(shown)


if __name__ == "__main__":
    main()
