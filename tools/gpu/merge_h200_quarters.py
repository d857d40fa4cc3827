"""Merge the H200 runs of the upstream suite, one per quarter (SAMPLE=4, OFFSET=0..3), into one report.

    .venv/bin/python tools/gpu/merge_h200_quarters.py \\
        benchmarks/results/h200/upstream_opencl_3.6_every4th.json \\
        benchmarks/results/h200/upstream_opencl_3.6_every4th_offset{1,2,3}.json \\
        --collected benchmarks/results/h200/upstream_3.6_collected_ids.txt.gz \\
        --out benchmarks/results/h200/upstream_opencl_3.6_merged

Inputs: the runner's JSON reports (`triton-sdk upstream-tests --json`, each with meta.sample and meta.offset) and the
collected test ids of the suite in collection order (the runner's collect.log on the H200, ids only), from which
each quarter's selection is `ids[offset::sample]`. Writes OUT.json and OUT.txt: totals, one row per test function
with a `not run` column, one row per quarter, and the failures with their messages.

Two corrections of the raw reports:
  - a run stopped at its budget (SIGINT) leaves one empty <testcase/> in pytest's JUnit file per test in flight,
    which the runner counts as a passed test of the function "" (id ".py::"); those rows are dropped;
  - not run = the quarter's selection minus what ran. Where the report lists its tests ("tests"), the not-run ids
    are exact; where it has only the per-function table, the count per function is exact, and the ids are exact only
    for functions of which nothing ran (for the others every selected id of the function is a candidate).
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

OUTCOMES = ("passed", "failed", "refused", "skipped", "crashed", "timeout")
PROBLEMS = ("failed", "crashed", "timeout")


def function_of(test_id: str) -> str:
    """The test function of a node id, as the runner's report names it."""
    return test_id.split("::")[-1].split("[", 1)[0]


def read_ids(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [line.strip() for line in f if "::" in line and not line.startswith(" ")]


def zero() -> dict[str, int]:
    return dict.fromkeys(OUTCOMES, 0)


def quarter(path: Path, collected: list[str], commits: dict[int, str]) -> dict[str, Any]:
    """One quarter's corrected counts, by function, and what of its selection did not run."""
    report = json.loads(path.read_text())
    meta = report["meta"]
    if meta.get("ids_file") or meta.get("k"):
        raise SystemExit(f"{path}: a run of chosen ids (--ids/-k) is not a quarter")
    sample, offset = int(meta.get("sample", 1)), int(meta.get("offset", 0))
    selection = collected[offset::sample]
    wanted = Counter(function_of(i) for i in selection)
    functions: dict[str, dict[str, int]] = {}
    empty = 0
    for name, counts in report["functions"].items():
        if name == "":
            empty += sum(counts.values())
            continue
        if name not in wanted:
            raise SystemExit(f"{path}: function {name} is not in the collected ids' selection: another suite?")
        functions[name] = {o: int(counts.get(o, 0)) for o in OUTCOMES}
    ran = {name: sum(c.values()) for name, c in functions.items()}
    not_run_by_function = {name: n - ran.get(name, 0) for name, n in wanted.items() if n > ran.get(name, 0)}
    over = {name: n for name, n in ran.items() if n > wanted[name]}
    if over:
        raise SystemExit(f"{path}: more tests ran than were selected: {over}")
    candidates: dict[str, list[str]] = {}
    if "tests" in report:
        done = {t["id"] for t in report["tests"]}
        not_run_ids = [i for i in selection if i not in done]
        exact = True
        if len(selection) - len(not_run_ids) != sum(ran.values()):
            raise SystemExit(f"{path}: its tests and its function table disagree")
    else:
        not_run_ids = [i for i in selection if function_of(i) in not_run_by_function and not ran.get(function_of(i))]
        for name in not_run_by_function:
            if ran.get(name):
                candidates[name] = [i for i in selection if function_of(i) == name]
        exact = not candidates
    failures = [
        {"id": t["id"], "outcome": t["outcome"], "message": t.get("message", "")}
        for t in report.get("tests", [])
        if t["outcome"] in PROBLEMS
    ]
    if "tests" not in report:  # older reports: the failures only as the runner's error lines
        failures = [
            {"id": e, "outcome": "failed", "message": ""} for e in report.get("errors", []) if e.startswith("FAILED")
        ]
    totals = zero()
    for counts in functions.values():
        for o in OUTCOMES:
            totals[o] += counts[o]
    return {
        "file": str(path),
        "sample": sample,
        "offset": offset,
        "tree_commit": meta.get("tree_commit") or commits.get(offset),
        "seconds": meta.get("seconds"),
        "interrupted": meta.get("interrupted", False),
        "selected": len(selection),
        "ran": sum(ran.values()),
        "not_run": len(selection) - sum(ran.values()),
        "junit_empty_testcases_dropped": empty,
        "totals": totals,
        "functions": functions,
        "not_run_by_function": not_run_by_function,
        "not_run_ids": not_run_ids,
        "not_run_ids_exact": exact,
        "not_run_candidates": candidates,
        "failures": failures,
        "stale_manifest_entries": [e for e in report.get("errors", []) if e.startswith("NOW PASSES")],
    }


def merge(quarters: list[dict[str, Any]], collected: list[str]) -> dict[str, Any]:
    seen = Counter((q["sample"], q["offset"]) for q in quarters)
    if any(n > 1 for n in seen.values()):
        raise SystemExit(f"a quarter given twice: {[k for k, n in seen.items() if n > 1]}")
    functions: dict[str, dict[str, int]] = {}
    for q in quarters:
        for name, counts in q["functions"].items():
            row = functions.setdefault(name, {**zero(), "not_run": 0})
            for o in OUTCOMES:
                row[o] += counts[o]
        for name, n in q["not_run_by_function"].items():
            functions.setdefault(name, {**zero(), "not_run": 0})["not_run"] += n
    totals = {**zero(), "not_run": 0}
    for row in functions.values():
        for key in totals:
            totals[key] += row[key]
    covered = sum(q["selected"] for q in quarters)
    return {
        "collected": len(collected),
        "selected": covered,
        "ran": sum(q["ran"] for q in quarters),
        "totals": totals,
        "quarters": [{k: v for k, v in q.items() if k != "functions"} for q in quarters],
        "functions": dict(sorted(functions.items())),
    }


def render(merged: dict[str, Any]) -> str:
    t = merged["totals"]
    cols = (*OUTCOMES, "not_run")
    lines = [
        (
            f"{merged['collected']} tests collected; the quarters given select {merged['selected']}, "
            f"{merged['ran']} ran, {t['not_run']} not run"
        ),
        "",
        "| quarter | commit | selected | ran | " + " | ".join(cols) + " | junit empty dropped | pytest s |",
        "|---|---|---|---|" + "---|" * len(cols) + "---|---|",
    ]
    for q in merged["quarters"]:
        c = q["totals"]
        row = [str(c[o]) for o in OUTCOMES] + [str(q["not_run"])]
        lines.append(
            f"| offset {q['offset']} of {q['sample']} | {(q['tree_commit'] or '?')[:7]} | {q['selected']} | {q['ran']} | "
            + " | ".join(row)
            + f" | {q['junit_empty_testcases_dropped']} | {q['seconds']} |"
        )
    lines.append(
        f"| merged | | {merged['selected']} | {merged['ran']} | " + " | ".join(str(t[c]) for c in cols) + " | | |"
    )
    problems = [(q["offset"], f) for q in merged["quarters"] for f in q["failures"]]
    lines += ["", f"## Failures outside the manifest ({len(problems)})", ""]
    for offset, f in problems:
        text = [line.strip() for line in f["message"].strip().splitlines() if line.strip()]
        said = text[0] if len(text) < 2 else f"{text[0]} ... {text[-1]}"
        lines.append(f"offset {offset}: {f['outcome'].upper()} {f['id']}: {said}")
    stale = sorted({s for q in merged["quarters"] for s in q["stale_manifest_entries"]})
    if stale:
        lines += ["", "## Manifest entries whose every test passed in some quarter", ""] + stale
    lines += ["", "## Not run, by quarter", ""]
    for q in merged["quarters"]:
        by = ", ".join(f"{n} {k}" for k, n in sorted(q["not_run_by_function"].items(), key=lambda kv: -kv[1]))
        exact = "ids exact" if q["not_run_ids_exact"] else "ids exact except " + ", ".join(q["not_run_candidates"])
        lines.append(f"offset {q['offset']}: {q['not_run']} ({exact}): {by or '-'}")
    none_ran = [n for n, row in merged["functions"].items() if not any(row[o] for o in OUTCOMES)]
    lines += [
        "",
        f"## Functions none of whose tests ran in any quarter ({len(none_ran)})",
        "",
        ", ".join(none_ran) or "-",
    ]
    width = max([len(n) for n in merged["functions"]] + [8])
    lines += ["", "## By test function", "", f"{'function':{width}s} " + " ".join(f"{c:>8s}" for c in cols)]
    for name, row in merged["functions"].items():
        lines.append(f"{name:{width}s} " + " ".join(f"{row[c]:8d}" for c in cols))
    lines.append(f"{'total':{width}s} " + " ".join(f"{t[c]:8d}" for c in cols))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("reports", nargs="+", type=Path, help="the quarters' JSON reports")
    p.add_argument("--collected", type=Path, required=True, help="collected ids in collection order (.txt or .gz)")
    p.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.txt")
    p.add_argument("--header", type=Path, default=None, help="text put above the generated tables in OUT.txt")
    p.add_argument(
        "--commit", action="append", default=[], metavar="OFFSET=SHA", help="tested commit of a report without one"
    )
    a = p.parse_args(argv)
    collected = read_ids(a.collected)
    if len(set(collected)) != len(collected):
        raise SystemExit(f"{a.collected}: duplicate ids")
    commits = {int(k): v for k, v in (c.split("=", 1) for c in a.commit)}
    quarters = sorted((quarter(r, collected, commits) for r in a.reports), key=lambda q: (q["sample"], q["offset"]))
    merged = merge(quarters, collected)
    Path(f"{a.out}.json").write_text(json.dumps(merged, indent=1) + "\n")
    header = a.header.read_text().rstrip() + "\n\n" if a.header else ""
    Path(f"{a.out}.txt").write_text(header + render(merged))
    t = merged["totals"]
    print(", ".join(f"{t[c]} {c}" for c in (*OUTCOMES, "not_run")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
