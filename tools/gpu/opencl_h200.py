"""Helper of run_opencl_h200.sh: `info` (OpenCL devices), `bench --backend cuda|opencl` (the same Triton kernels,
checked against torch, timed), `asm --backend cuda|opencl` (their device code), `report` (summary.md from the bench
JSON files and the test logs).

Each backend is benchmarked in its own process: Triton's JIT keeps one kernel cache per device number, and both
drivers call their device 0. opencl launches take CPU tensors and copy them to the GPU and back, so two times are
reported for it: `device_ms` (the kernel alone, from OpenCL profiling events) and `e2e_ms` (the whole launch call);
ratios are ours/CUDA with the kernel alone against Triton-CUDA's do_bench time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path


def cmd_info(args: argparse.Namespace) -> int:
    import pyopencl as cl

    for pi, p in enumerate(cl.get_platforms()):
        for di, d in enumerate(p.get_devices()):
            print(f"[{pi}:{di}] {p.name} / {d.name} | {d.version} | {d.opencl_c_version} | driver {d.driver_version}")
            print(
                f"    units={d.max_compute_units} wg={d.max_work_group_size} local={d.local_mem_size} "
                f"global={d.global_mem_size >> 20} MiB unified={d.host_unified_memory}"
            )
            print(f"    extensions: {d.extensions}")
    from triton_backend_sdk.backends.opencl.runtime import describe, selected_device

    print("selected:", selected_device().name, "->", describe())
    return 0


#: bytes zero-filled on the device before each re-run of ours: triton.testing.do_bench's L2-clearing buffer (256 MiB)
FLUSH_BYTES = 256 << 20


def kernels() -> tuple:
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    @triton.jit
    def softmax(out_ptr, x_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)

    @triton.jit
    def layer_norm(out_ptr, x_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0)
        mean = tl.sum(x, axis=0) / n_cols
        d = tl.where(m, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        tl.store(out_ptr + row * stride + cols, d * rstd * w + b, mask=m)

    @triton.jit
    def matmul(
        a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
    ):
        pid = tl.program_id(0)
        nn = tl.cdiv(N, BN)
        pm, pn = pid // nn, pid % nn
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            ka = k * BK + rk
            x = tl.load(a, mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
            y = tl.load(b, mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc, input_precision="ieee")
            a += BK * sak
            b += BK * sbk
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    return add, softmax, layer_norm, matmul


def cases(dev: str, matmul_opts: dict | None = None) -> Iterator[tuple]:
    """(name, launch, reference, torch op to time, output, tolerance, bytes or flops) per benchmark; `matmul_opts`:
    opencl launch options for the matmul (work_items, double_buffer)."""
    import torch
    import triton

    add, softmax, layer_norm, matmul = kernels()
    g = torch.Generator().manual_seed(0)

    def rnd(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g).to(dev)

    n = 1 << 24
    x, y, o = rnd(n), rnd(n), torch.empty(n, device=dev)
    yield (
        "vector_add_2^24",
        lambda: add[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024, num_warps=4),
        lambda: x + y,
        lambda: x + y,
        o,
        0.0,
        3 * 4 * n,
    )
    r = c = 4096
    s, so = rnd(r, c), torch.empty(r, c, device=dev)
    yield (
        "softmax_4096x4096",
        lambda: softmax[(r,)](so, s, s.stride(0), c, BLOCK=4096, num_warps=8),
        lambda: torch.softmax(s.double(), 1),
        lambda: torch.softmax(s, 1),
        so,
        1e-5,
        2 * 4 * r * c,
    )
    w, b, lo = rnd(c), rnd(c), torch.empty(r, c, device=dev)
    yield (
        "layer_norm_4096x4096",
        lambda: layer_norm[(r,)](lo, s, w, b, s.stride(0), c, 1e-5, BLOCK=4096, num_warps=8),
        lambda: torch.nn.functional.layer_norm(s.double(), (c,), w.double(), b.double(), 1e-5),
        lambda: torch.nn.functional.layer_norm(s, (c,), w, b, 1e-5),
        lo,
        1e-4,
        2 * 4 * r * c,
    )
    m = 2048
    A, B, C = rnd(m, m), rnd(m, m), torch.empty(m, m, device=dev)
    grid = (triton.cdiv(m, 64) * triton.cdiv(m, 64),)
    yield (
        "matmul_fp32_2048^3",
        lambda: matmul[grid](
            A,
            B,
            C,
            m,
            m,
            m,
            A.stride(0),
            A.stride(1),
            B.stride(0),
            B.stride(1),
            C.stride(0),
            C.stride(1),
            BM=64,
            BN=64,
            BK=32,
            num_warps=4,
            **(matmul_opts or {}),
        ),
        lambda: A.double() @ B.double(),
        lambda: A @ B,
        C,
        1e-4,
        2 * m**3,
    )


def cmd_bench(args: argparse.Namespace) -> int:
    import torch

    results = []
    if args.backend == "opencl":
        import triton_backend_sdk

        triton_backend_sdk.use("opencl")
        from triton_backend_sdk.backends.opencl.runtime import runtime_for, selected_device

        rt = runtime_for(selected_device())
        dev = "cpu"
    else:
        dev = "cuda"
    matmul_opts = {"work_items": args.work_items} if args.work_items else {}
    for kv in args.opt:
        key, _, value = kv.partition("=")
        matmul_opts[key] = bool(int(value))
    for name, launch, ref, torch_op, out, tol, work in cases(dev, matmul_opts):
        if args.only not in name:
            continue
        rec: dict = {"name": name, "backend": args.backend, "work": work}
        if "matmul" in name:
            rec.update(matmul_opts)
        try:
            t = time.perf_counter()
            launch()
            if dev == "cuda":
                torch.cuda.synchronize()
            rec["first_call_s"] = time.perf_counter() - t
            want = ref().to(out.dtype)
            err = (out.double() - want.double()).abs().max().item()
            scale = max(1.0, want.abs().max().item())
            rec["max_err"] = err
            rec["ok"] = err <= tol * scale + 1e-6
            if dev == "cuda":
                import triton

                rec["device_ms"] = triton.testing.do_bench(launch, warmup=25, rep=200)
                rec["torch_ms"] = triton.testing.do_bench(torch_op, warmup=10, rep=100)
            else:
                dev_ns, wall = [], []
                reps = 20 if "matmul" in name else 50  # ~0.06 ms kernels moved 30 % between runs of 10
                for _ in range(reps):
                    t = time.perf_counter()
                    launch()
                    wall.append(time.perf_counter() - t)
                    ev = rt.last_event
                    dev_ns.append(ev.profile.end - ev.profile.start)
                rec["device_ms"] = statistics.median(dev_ns) / 1e6
                rec["e2e_ms"] = statistics.median(wall) * 1e3
                # the kernel again on its device buffers, back to back, the L2 cleared before each run as do_bench
                # clears it (the launches above run after their tensors' copies, on a GPU idle meanwhile)
                rt.rerun_last(5)
                rerun = rt.rerun_last(reps, flush_bytes=FLUSH_BYTES)
                rec["rerun_ms"] = statistics.mean(rerun) / 1e6  # do_bench's statistic: the mean
                rec["rerun_median_ms"] = statistics.median(rerun) / 1e6
            print(json.dumps(rec), flush=True)
        except Exception as e:  # noqa: BLE001 - one failing case must not hide the others
            rec["ok"] = False
            rec["error"] = f"{type(e).__name__}: {e}"[:2000]
            traceback.print_exc()
            print(json.dumps(rec), flush=True)
        results.append(rec)
        Path(args.json).write_text(json.dumps(results, indent=1))  # after each case: a timeout keeps what ran
    return 0


def cmd_asm(args: argparse.Namespace) -> int:
    """Each benchmark kernel's device code as the backend built it, into --out: Triton-CUDA's PTX, or opencl's
    OpenCL C and NVIDIA's binary for it (PTX text), so the two can be compared offline."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = "cuda"
    if args.backend == "opencl":
        import triton_backend_sdk

        triton_backend_sdk.use("opencl")
        dev = "cpu"
    for name, launch, *_ in cases(dev):
        try:
            kernel = launch()
            for key, value in kernel.asm.items():
                data = value if isinstance(value, bytes) else str(value).encode()
                (out / f"{name}.{args.backend}.{key}").write_bytes(data)
            print(name, args.backend, sorted(kernel.asm), flush=True)
        except Exception:  # noqa: BLE001 - one failing case must not hide the others
            traceback.print_exc()
    return 0


def _junit_counts(path: Path) -> str:
    if not path.exists():
        return "not run (or timed out before writing results)"
    text = path.read_text()
    m = re.search(r'<testsuite[^>]*errors="(\d+)"[^>]*failures="(\d+)"[^>]*skipped="(\d+)"[^>]*tests="(\d+)"', text)
    if not m:
        return "unreadable junit file"
    err, fail, skip, tests = map(int, m.groups())
    return f"{tests - err - fail - skip} passed, {fail} failed, {err} errors, {skip} skipped/xfailed of {tests}"


def _load(p: Path) -> list:
    return json.loads(p.read_text()) if p.exists() else []


def _ms(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"


def cmd_report(args: argparse.Namespace) -> int:
    out = Path(args.out)
    cuda = {r["name"]: r for r in _load(out / "bench_cuda.json")}
    ocl = {r["name"]: r for r in _load(out / "bench_opencl.json")}
    print("# opencl backend on NVIDIA H200 (NVIDIA OpenCL) vs Triton's CUDA backend\n")
    dev = (out / "devices.txt").read_text().splitlines() if (out / "devices.txt").exists() else []
    print("Devices:\n```\n" + "\n".join(dev[:12]) + "\n```\n")
    print(
        "| kernel | cuda ms | opencl kernel ms | opencl kernel ms, re-run (L2 cleared) "
        "| opencl launch ms (with host copies) | cuda/ours (kernel) | cuda/ours (re-run) | ok cuda/opencl |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in sorted(set(cuda) | set(ocl)):
        c, o = cuda.get(name, {}), ocl.get(name, {})
        cm, om, rm = c.get("device_ms"), o.get("device_ms"), o.get("rerun_ms")
        ratio = f"{cm / om:.2f}" if cm and om else "-"
        rerun = f"{cm / rm:.2f}" if cm and rm else "-"
        print(
            f"| {name} | {_ms(cm)} | {_ms(om)} | {_ms(rm)} | {_ms(o.get('e2e_ms'))} | {ratio} | {rerun} "
            f"| {c.get('ok')}/{o.get('ok')} |"
        )
    for rec in list(cuda.values()) + list(ocl.values()):
        if rec.get("error"):
            print(f"\n{rec['backend']} {rec['name']} error: {rec['error'][:600]}")
    print("\n## Tests on NVIDIA OpenCL\n")
    print(f"- tests/test_kernels.py + tests/test_opencl_*.py: {_junit_counts(out / 'junit_kernels.xml')}")
    print(f"- tests/test_op_suite.py (test_case): {_junit_counts(out / 'junit_op_suite.xml')}")
    for log in ("tests_kernels.log", "tests_op_suite.log"):
        p = out / log
        if p.exists():
            fails = [ln for ln in p.read_text().splitlines() if ln.startswith(("FAILED", "ERROR"))]
            if fails:
                print(f"\n{log}: first failures:\n```\n" + "\n".join(fails[:25]) + "\n```")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info").set_defaults(fn=cmd_info)
    b = sub.add_parser("bench")
    b.add_argument("--backend", choices=["cuda", "opencl"], required=True)
    b.add_argument("--json", required=True)
    b.add_argument("--only", default="", help="only cases whose name contains this text")
    b.add_argument("--work-items", type=int, default=0, help="opencl matmul: work-items per program (0: default)")
    b.add_argument("--opt", action="append", default=[], help="opencl matmul: a boolean launch option, NAME=0|1")
    b.set_defaults(fn=cmd_bench)
    a = sub.add_parser("asm")
    a.add_argument("--backend", choices=["cuda", "opencl"], required=True)
    a.add_argument("--out", required=True)
    a.set_defaults(fn=cmd_asm)
    r = sub.add_parser("report")
    r.add_argument("--out", default=os.environ.get("OUT", "."))
    r.set_defaults(fn=cmd_report)
    args = p.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
