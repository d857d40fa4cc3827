"""Run a Triton kernel library's own test suite on an SDK backend, one parameter set per test function.

    .venv/bin/python tools/kernel_library_tests.py --library liger --src DIR --backend cpu_ref --dtype fp32 --out DIR

`--src` is the library's source tree with its tests (Liger-Kernel's sdist has them: `pip download --no-binary :all:
liger-kernel`), the library itself installed in this venv. The tests run on CPU tensors, so Triton compiles them for
the backend `TRITON_DEFAULT_BACKEND` names. Each test function runs once, with its first parameter set of the chosen
dtype (`fp32`: an id naming float32, else the first set without a 16-bit float; `bf16`: an id naming bfloat16 —
functions without one are left out). Tests run in pytest processes of their own; a test that takes the process down
is recorded as a crash (with its signal) and the run resumes after it; one that runs past `--timeout` is recorded as a
timeout. Writes `results.json` (one record per test) and `summary.md` (counts, then every result that is not a pass,
with its reason) into `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = Path(__file__).resolve().parent

#: per library: test paths (relative to --src), and extra pytest arguments
LIBRARIES = {
    "liger": {"paths": ["test/transformers", "test/chunked_loss"], "args": []},
    "flaggems": {"paths": ["tests"], "args": ["-p", "kernel_library_flaggems_cpu", "--quick"]},
}
DTYPE_WORDS = {
    "fp32": (("float32", "fp32"), ("bfloat16", "float16", "bf16", "fp16", "half")),
    "bf16": (("bfloat16", "bf16"), ()),
}
OUTCOMES = ("passed", "failed", "error", "crash", "timeout", "skipped", "xfailed", "not_run")


@dataclass
class Selection:
    ids: list[str]
    collect_errors: dict[str, str] = field(default_factory=dict)


def _pytest_base(library: str, log: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "kernel_library_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rN",
        "--no-header",
        f"--library-log={log}",
        *LIBRARIES[library]["args"],
    ]


def _env(backend: str, cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["TRITON_DEFAULT_BACKEND"] = backend
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TOOLS), env.get("PYTHONPATH", "")) if p)
    if cache is not None:
        env["TRITON_CACHE_DIR"] = str(cache)
    return env


def choose(items: dict[str, list[str]], dtype: str) -> list[str]:
    """One node id per test function: the first of the dtype's parameter sets (see the module docstring).

    `items` maps each node id to the words it is parametrized with (torch dtypes as `torch.float32`, strings), the id's
    own bracket text included: libraries name dtypes either way.
    """
    wanted, unwanted = DTYPE_WORDS[dtype]
    by_function: dict[str, list[str]] = {}
    for nodeid in items:
        by_function.setdefault(nodeid.split("[", 1)[0], []).append(nodeid)

    def words(nodeid: str) -> str:
        return " ".join([nodeid.split("[", 1)[1] if "[" in nodeid else "", *items[nodeid]]).lower()

    chosen = []
    for ids in by_function.values():
        named = [i for i in ids if any(w in words(i) for w in wanted)]
        if named:
            chosen.append(named[0])
        elif dtype == "fp32":
            plain = [i for i in ids if not any(w in words(i) for w in unwanted)]
            if plain:
                chosen.append(plain[0])
    return chosen


def collect(args: argparse.Namespace, out: Path) -> Selection:
    log = out / "collect.jsonl"
    log.unlink(missing_ok=True)
    paths = args.tests or LIBRARIES[args.library]["paths"]
    cmd = [*_pytest_base(args.library, log), "--collect-only", "--continue-on-collection-errors", *paths]
    if args.k:
        cmd += ["-k", args.k]
    proc = subprocess.run(cmd, check=False, cwd=args.src, env=_env(args.backend, None), capture_output=True, text=True)
    items: dict[str, list[str]] = {}
    errors = {}
    if log.exists():
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if "collect_error" in record:
                errors[record["collect_error"]] = record["reason"]
            elif "item" in record:
                items[record["item"]] = record["params"]
    if not items and not errors:
        raise SystemExit(f"collected nothing under {args.src}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return Selection(choose(items, args.dtype), errors)


def _signal_name(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit status {rc}"


def _run_batch(args: argparse.Namespace, ids: list[str], out: Path, results: dict[str, dict]) -> list[str]:
    """Run `ids` in one pytest process; returns those left to run after a crash or a timeout."""
    log = out / "run.jsonl"
    ids_file = out / "ids.txt"
    ids_file.write_text("\n".join(ids) + "\n")
    start_line = len(log.read_text().splitlines()) if log.exists() else 0
    cmd = [*_pytest_base(args.library, log), f"--library-ids={ids_file}", f"--library-timeout={args.timeout}"]
    cmd += sorted({i.split("::", 1)[0] for i in ids})
    with open(out / "pytest.log", "a") as stream:
        proc = subprocess.Popen(
            cmd,
            cwd=args.src,
            env=_env(args.backend, args.cache),
            stdout=stream,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started: str | None = None
        last_start = time.monotonic()
        seen = start_line
        done = 0
        while proc.poll() is None:
            time.sleep(1.0)
            lines = log.read_text().splitlines() if log.exists() else []
            for line in lines[seen:]:
                record = json.loads(line)
                if "start" in record:
                    started, last_start = record["start"], time.monotonic()
                    print(f"[{len(results) + done + 1}/{args.total}] {started}", flush=True)
                elif "result" in record:
                    done += 1
            seen = len(lines)
            if started and time.monotonic() - last_start > args.timeout + 120:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                results[started] = {"outcome": "timeout", "reason": "no result or watchdog line (hung in C?)"}
                break
        rc = proc.returncode
    crashed = None
    records = (log.read_text().splitlines() if log.exists() else [])[start_line:]
    for line in records:
        record = json.loads(line)
        if "start" in record:
            crashed = record["start"]
        elif "result" in record:
            results[record["result"]] = {k: record[k] for k in ("outcome", "reason", "seconds")}
            crashed = None
        elif "timeout" in record:
            results[record["timeout"]] = {"outcome": "timeout", "reason": f"over {record['seconds']:.0f} s"}
            crashed = None
    if crashed is not None and crashed not in results:
        results[crashed] = {"outcome": "crash", "reason": _signal_name(rc)}
    left = [i for i in ids if i not in results]
    # exit 5: pytest found none of the ids (a suite whose parameter ids are random per process, as some of FlagGems'
    # are); with nothing run, another batch would find none again
    if left and crashed is None and (rc in (0, 5) or not records):
        for nodeid in left:
            results[nodeid] = {
                "outcome": "not_run",
                "reason": "pytest did not run this id (deselected by the suite, or its parameter id differs per process)",
            }
        return []
    return left


def summarize(args: argparse.Namespace, selection: Selection, results: dict[str, dict]) -> str:
    counts = Counter(r["outcome"] for r in results.values())
    counts["error"] += len(selection.collect_errors)
    total = len(results) + len(selection.collect_errors)
    header = "| library | backend | dtype | functions | " + " | ".join(OUTCOMES) + " |"
    rule = "|" + "---|" * (4 + len(OUTCOMES))
    row = f"| {args.library} | {args.backend} | {args.dtype} | {total} | " + " | ".join(
        str(counts[k]) for k in OUTCOMES
    )
    lines = [header, rule, row + " |", ""]
    if selection.collect_errors:
        lines.append("## Collection errors (a whole file; counted as one error each)")
        lines += [f"- `{path}`: {reason}" for path, reason in sorted(selection.collect_errors.items())]
        lines.append("")
    lines.append("## Not passed")
    for nodeid, record in sorted(results.items()):
        if record["outcome"] not in ("passed",):
            lines.append(f"- {record['outcome']}: `{nodeid}`: {record['reason']}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", choices=sorted(LIBRARIES), required=True)
    parser.add_argument("--src", type=Path, required=True, help="the library's source tree (with its tests)")
    parser.add_argument("--backend", default="cpu_ref")
    parser.add_argument("--dtype", choices=sorted(DTYPE_WORDS), default="fp32")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per test")
    parser.add_argument("--tests", nargs="*", help="test paths under --src (default: the library's suite)")
    parser.add_argument("-k", help="pytest -k expression applied at collection")
    parser.add_argument("--cache", type=Path, help="TRITON_CACHE_DIR for the runs (default: Triton's)")
    parser.add_argument(
        "--rerun", type=Path, help="a results.json of an earlier run: run its tests that did not pass, and merge"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.src = args.src.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "run.jsonl").unlink(missing_ok=True)
    (args.out / "pytest.log").unlink(missing_ok=True)
    earlier: dict[str, dict] = {}
    if args.rerun:
        data = json.loads(args.rerun.read_text())
        earlier = data["results"]
        selection = Selection([i for i, r in earlier.items() if r["outcome"] != "passed"], data["collect_errors"])
    else:
        selection = collect(args, args.out)
    args.total = len(selection.ids)
    print(f"{args.total} test functions selected ({args.dtype}); {len(selection.collect_errors)} files fail to collect")
    results: dict[str, dict] = {}
    left = selection.ids
    while left:
        left = _run_batch(args, left, args.out, results)
    results = {**earlier, **results}
    (args.out / "results.json").write_text(
        json.dumps({"collect_errors": selection.collect_errors, "results": results}, indent=1, sort_keys=True)
    )
    summary = summarize(args, selection, results)
    (args.out / "summary.md").write_text(summary)
    print(summary.split("\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
