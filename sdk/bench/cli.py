"""`triton-sdk bench`: the benchmark cases on SDK backends against their peers, written as bench.json, bench.md and
bench.png; `--render-h200 DIR` renders a GPU run's JSON files instead."""

from __future__ import annotations

import argparse
import os
from typing import Any

from . import MODES


def add_parser(sub: Any) -> argparse.ArgumentParser:
    b = sub.add_parser(
        "bench",
        help="benchmark SDK backends against torch, torch.compile, numpy and Triton's interpreter",
        description="Time vector add, softmax, layer norm, fp32 and fp16 matmul, fused attention and launch "
        "overhead on each backend, interleaved with their peers, beside a triad/sgemm roofline measured in the "
        "same run; write bench.json, bench.md and bench.png to --out.",
    )
    b.add_argument("--quick", action="store_true", help="reduced sizes and rounds (about a minute on cpu_ref)")
    b.add_argument(
        "--backend",
        action="extend",
        nargs="+",
        default=None,
        help="SDK backends (default cpu_ref, and opencl where an OpenCL device is present)",
    )
    b.add_argument("-k", default=None, help="only cases whose name contains every word of this filter")
    b.add_argument("--out", required=True, help="directory for bench.json, bench.md and bench.png")
    b.add_argument("--no-interpreter", action="store_true", help="leave out the Triton interpreter peer")
    b.add_argument(
        "--render-h200",
        metavar="DIR",
        default=None,
        help="render DIR/bench_*.json (tools/gpu/opencl_h200.py) to --out/bench.md and bench.png instead of running",
    )
    b.add_argument("--sizes", choices=MODES, default=None, help=argparse.SUPPRESS)  # smoke: the unit test's sizes
    return b


def _opencl_usable() -> str | None:
    """None when the opencl backend can run here, else why not."""
    try:
        import pyopencl  # noqa: F401
    except ImportError:
        return "the opencl backend needs pyopencl: pip install -e '.[opencl]' (and an OpenCL driver such as PoCL)"
    try:
        from ..backends.opencl.runtime import all_devices

        if not all_devices():
            return "the opencl backend found no OpenCL device (install an ICD, e.g. pocl-opencl-icd)"
    except Exception as e:  # noqa: BLE001 - no ICD loader, a broken platform
        return f"the opencl backend cannot list OpenCL devices: {e}"
    return None


def _backends(names: list[str] | None, usage_error: type[Exception]) -> list[str]:
    from triton.backends import backends

    sdk = sorted(n for n, b in backends.items() if hasattr(b.compiler, "describe") and n != "cpu")
    if names is None:
        return ["cpu_ref"] + (["opencl"] if "opencl" in sdk and _opencl_usable() is None else [])
    for name in names:
        if name not in sdk:
            raise usage_error(f"unknown backend {name!r}; SDK backends: {', '.join(sdk)}")
        why = _opencl_usable() if name == "opencl" else None
        if why:
            raise usage_error(why)
    return list(dict.fromkeys(names))


def _out_dir(path: str, usage_error: type[Exception]) -> None:
    if os.path.exists(path) and not os.path.isdir(path):
        raise usage_error(f"--out {path}: is not a directory")
    os.makedirs(path, exist_ok=True)


def run_command(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    import torch

    from . import report as writer
    from .cases import CASES, select
    from .run import failed, run

    try:
        writer.require_matplotlib()
    except ImportError as e:
        raise usage_error(str(e)) from None
    if args.render_h200:
        from .h200 import render

        if not os.path.isdir(args.render_h200):
            raise usage_error(f"--render-h200 {args.render_h200}: no such directory")
        _out_dir(args.out, usage_error)
        try:
            paths = render(args.render_h200, args.out)
        except ValueError as e:
            raise usage_error(str(e)) from None
        print("\n".join(f"wrote {p}" for p in paths))
        return 0
    cases = select(args.k)
    if not cases:
        raise usage_error(f"-k {args.k!r} selects no case; cases: {', '.join(c.name for c in CASES)}")
    backends = _backends(args.backend, usage_error)
    _out_dir(args.out, usage_error)
    mode = args.sizes or ("quick" if args.quick else "full")
    torch.set_num_threads(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    report = run(cases, backends, mode, interpreter=not args.no_interpreter)
    paths = writer.write(report, args.out)
    bad = failed(report)
    print(f"{len(report['results'])} results in {report['seconds']:.0f} s{', some FAILED' if bad else ''}")
    print("\n".join(f"wrote {p}" for p in paths))
    return 1 if bad else 0
