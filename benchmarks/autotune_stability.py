"""Does `@triton.autotune` pick the same config run after run on an SDK backend?

Each run is a fresh process (as a user's script is) that autotunes tutorial 03's fp32 matmul over configs whose
speeds differ, with Triton's own `do_bench` (the SDK driver's cache flush and benchmarker underneath). Reports each
run's winner and timings, whether every run picked the same config, and each config's spread over the runs (their
max/min median time): a winner can only be stable where the configs are further apart than that spread.

    .venv/bin/python -m benchmarks.autotune_stability --backend cpu_ref --runs 4 [--size 1024] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: (BM, BN, BK) of the configs tried, GROUP_M 8
CONFIGS = [(32, 32, 32), (64, 64, 32), (128, 128, 32), (64, 128, 64)]

_CHILD = """
import json, sys, torch, triton
import triton_backend_sdk
from benchmarks.kernels import matmul_kernel

backend, size, configs = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
triton_backend_sdk.use(backend)
torch.set_num_threads(2)
tuned = triton.autotune(
    configs=[triton.Config({"BM": m, "BN": n, "BK": k, "GROUP_M": 8}) for m, n, k in configs], key=["M", "N", "K"]
)(matmul_kernel)
a, b = torch.rand(size, size), torch.rand(size, size)
c = torch.empty(size, size)
grid = lambda META: (triton.cdiv(size, META["BM"]) * triton.cdiv(size, META["BN"]),)
tuned[grid](a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
best = tuned.best_config.kwargs
timings = {f"{c.kwargs['BM']}x{c.kwargs['BN']}x{c.kwargs['BK']}": t[0] for c, t in tuned.configs_timings.items()}
print(json.dumps({"winner": f"{best['BM']}x{best['BN']}x{best['BK']}", "ms": timings}))
"""


def run_once(backend: str, size: int) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, backend, str(size), json.dumps(CONFIGS)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=900,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"autotune run failed on {backend}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict]) -> dict:
    names = sorted(runs[0]["ms"])
    spread = {n: max(r["ms"][n] for r in runs) / min(r["ms"][n] for r in runs) for n in names}
    winners = [r["winner"] for r in runs]
    return {
        "winners": winners,
        "same_winner": len(set(winners)) == 1,
        "winner_vs_best": [r["ms"][r["winner"]] / min(r["ms"].values()) for r in runs],
        "spread": spread,
        "median_ms": {n: sorted(r["ms"][n] for r in runs)[len(runs) // 2] for n in names},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", action="append", help="SDK backend (repeatable; default cpu_ref and opencl)")
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--json", help="write runs and summary here")
    args = p.parse_args(argv)
    report = {}
    for backend in args.backend or ["cpu_ref", "opencl"]:
        runs = []
        for i in range(args.runs):
            runs.append(run_once(backend, args.size))
            print(
                f"{backend} run {i + 1}: winner {runs[-1]['winner']}",
                {k: round(v, 2) for k, v in runs[-1]["ms"].items()},
            )
        report[backend] = {"runs": runs, "summary": summarize(runs)}
        s = report[backend]["summary"]
        print(
            f"{backend}: same winner in {args.runs} runs: {s['same_winner']} ({', '.join(s['winners'])}); "
            f"config spread max/min: " + ", ".join(f"{n} {v:.2f}" for n, v in s["spread"].items())
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0 if all(r["summary"]["same_winner"] for r in report.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
