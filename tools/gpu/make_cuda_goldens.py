"""Record CUDA-path goldens for the conformance suite: run every case with Triton's own CUDA backend on a GPU.

Run on a CUDA machine from the repository root (the SDK need not be installed; its `sdk/` folder is put on the path
as `triton_backend_sdk`, so Triton does not discover the SDK's backends and uses CUDA):

    python3 tools/gpu/make_cuda_goldens.py OUT.json.gz [--seed 0] [-k FILTER]
    # a run that kills the CUDA context exits 3 after saving; resume in a fresh process:
    until python3 tools/gpu/make_cuda_goldens.py OUT.json.gz --resume; [ $? -ne 3 ]; do :; done

Writes a `GoldenSet` (see sdk/conformance/goldens.py) with the versions of Triton, torch, CUDA and the driver.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _sdk_on_path() -> None:
    try:
        import triton_backend_sdk  # noqa: F401

        return
    except ImportError:
        pass
    d = tempfile.mkdtemp(prefix="tbs-path-")
    os.symlink(os.path.join(ROOT, "sdk"), os.path.join(d, "triton_backend_sdk"))
    sys.path.insert(0, d)


def _driver_version() -> str:
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-k", default=None)
    p.add_argument("--resume", action="store_true", help="continue a partial file (after a poisoned CUDA context)")
    args = p.parse_args()
    _sdk_on_path()
    import torch
    import triton
    from triton_backend_sdk.conformance import goldens as G
    from triton_backend_sdk.conformance.cases import all_cases
    from triton_backend_sdk.conformance.runner import run_on_cuda, select

    assert torch.cuda.is_available(), "needs a CUDA GPU"
    gs = G.GoldenSet(
        meta={
            "triton": triton.__version__,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "gpu": torch.cuda.get_device_name(0),
            "driver": _driver_version(),
            "seed": args.seed,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
    )
    if args.resume and os.path.exists(args.out):
        gs.records = G.GoldenSet.load(args.out).records
    runs = select(all_cases(), args.k)
    t0 = time.perf_counter()
    for i, (case, dtype, shape) in enumerate(runs):
        if gs.get(case.name, dtype, shape, args.seed) is not None:
            continue
        outcome, outputs, message = run_on_cuda(case, dtype, shape, args.seed)
        gs.add(case.name, dtype, shape, args.seed, outcome, outputs, message)
        if outcome != "pass":
            print(f"{outcome}: {case.name}[{dtype}-{shape}]: {message[:300]}", flush=True)
        if "illegal memory access" in message or "unspecified launch failure" in message:
            # the CUDA context is lost for this process: save, and let the caller resume in a fresh one
            gs.save(args.out)
            print(f"CUDA context lost at {case.name}[{dtype}-{shape}]; resume with --resume", flush=True)
            return 3
        if i % 100 == 0:
            print(f"{i}/{len(runs)} {time.perf_counter() - t0:.0f} s", flush=True)
    counts: dict[str, int] = {}
    for rec in gs.records.values():
        counts[rec["outcome"]] = counts.get(rec["outcome"], 0) + 1
    gs.meta["counts"] = counts
    gs.save(args.out)
    print(f"{len(runs)} runs: {counts}; wrote {args.out} ({os.path.getsize(args.out)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
