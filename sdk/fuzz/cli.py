"""`triton-sdk fuzz`: its options (import-light: the parser is built for every `triton-sdk` command) and its run."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def add_parser(sub: Any, int_at_least: Any, positive_float: Any) -> argparse.ArgumentParser:
    f = sub.add_parser(
        "fuzz",
        help="differential fuzzing: random kernels on SDK backends vs Triton's interpreter",
        description="Generate random Triton kernels (expression trees over masked loads, arithmetic, math, where, "
        "casts, reductions, scans, dots), run each on the backends and on Triton's interpreter (with the SDK's "
        "documented semantics where numpy's differ), compare, and write a minimized repro of every failure.",
    )
    f.add_argument("--cases", type=int_at_least(1), default=200, help="expression cases to run (default 200)")
    f.add_argument("--seed", type=int_at_least(0), default=0, help="run seed: the same seed gives the same kernels")
    f.add_argument("--backends", nargs="+", default=None, help="backends (default cpu_ref opencl; opencl@wg128 too)")
    f.add_argument("--out", default=None, help="keep kernels, logs, report.json and repros/ under this directory")
    f.add_argument("--exprs", type=int_at_least(1), default=8, help="cases per kernel (default 8)")
    f.add_argument("--jobs", type=int_at_least(1), default=1, help="worker processes per backend (default 1)")
    f.add_argument("--opt-levels", nargs="+", type=int, default=[3], help="opt_level of each kernel, drawn from these")
    f.add_argument("--timeout", type=positive_float, default=600, help="seconds a worker may take for one kernel")
    f.add_argument(
        "--time-limit", type=positive_float, default=None, help="start no kernel after this many seconds; report"
    )
    f.add_argument("--minimize-seconds", type=float, default=120, help="time to shrink each failure (needs --out)")
    f.add_argument("--avoid-known", action="store_true", help="leave out the constructs of known bugs (known.py)")
    f.add_argument("--replay", default=None, help="run this generated kernel file (a repro) and compare, no fuzzing")
    f.add_argument("--json", action="store_true", help="print the report as JSON")
    f.add_argument("--quiet", action="store_true", help="no progress lines")
    return f


def run_command(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    from triton.backends import backends as registered

    from .runner import DEFAULT_BACKENDS, Fuzzer, replay

    names = list(args.backends or DEFAULT_BACKENDS)
    for b in names:
        if b.split("@")[0] not in registered:
            raise usage_error(f"unknown backend {b!r}; registered: {', '.join(sorted(registered))}")
    if any(not 0 <= lv <= 3 for lv in args.opt_levels):
        raise usage_error(f"--opt-levels must be in 0..3, got {args.opt_levels}")
    if args.replay:
        if not os.path.isfile(args.replay):
            raise usage_error(f"--replay {args.replay}: no such file")
        lines = replay(args.replay, names, args.timeout)
        print("\n".join(lines))
        return 0 if all(line.endswith(": ok") for line in lines) else 1
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    fz = Fuzzer(
        seed=args.seed,
        backends=names,
        out=args.out,
        exprs_per_kernel=args.exprs,
        jobs=args.jobs,
        timeout=args.timeout,
        opt_levels=tuple(args.opt_levels),
        minimize_budget=args.minimize_seconds,
        avoid_known=args.avoid_known,
        time_limit=args.time_limit,
        progress=None if args.quiet else lambda msg: print(msg, file=sys.stderr, flush=True),
    )
    report = fz.run(args.cases)
    if args.out:
        with open(os.path.join(args.out, "report.json"), "w") as fh:
            json.dump(report.to_json(), fh, indent=2, default=str)
    print(json.dumps(report.to_json(), indent=2, default=str) if args.json else "\n".join(report.summary()))
    return 0 if report.ok else 1
