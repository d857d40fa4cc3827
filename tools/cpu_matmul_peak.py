"""cpu_ref's fp32 matmul as a fraction of this host's FMA peak, measured round by round beside it.

On a shared host the cores' throughput moves from one second to the next (another tenant on the sibling hardware
thread, the clock): a GFLOP/s figure timed alone says little. Each round here times, back to back:

- the host's peak: a C loop of independent 512-bit (or 256-bit) FMAs on every core, built with the system compiler,
  before and after the round's sides (the round's peak is the higher);
- cpu_ref's tutorial-03 kernel (`bench.kernels.matmul_kernel`) at 2048³ on the given tiles, and the same kernel
  compiled with `reuse_dot_operands=False` (each program reads its B tiles from memory);
- the same kernel with every k step reading the program's first A and B tiles again (`HOT_A`, `HOT_B`): the
  product with its operands in cache, which splits the gap to the peak into compute and memory;
- torch.mm (MKL) and numpy's matmul (OpenBLAS) as the BLAS peers.

and reports each side's median GFLOP/s and its median per-round fraction of that round's peak.

    .venv/bin/python tools/cpu_matmul_peak.py [--rounds 12] [--tiles 128x64x32] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

# numpy's OpenBLAS reads these when it loads; unset, it picks its kernel for this CPU (as the bench's numpy child)
for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_var, None)

import numpy as np  # noqa: I001 (after the environment above)
import torch
import triton
import triton.language as tl

import triton_backend_sdk
from triton_backend_sdk.bench.kernels import matmul_kernel
from triton_backend_sdk.bench.timing import timed_calls

PROBE_C = r"""
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define FMA _mm512_fmadd_ps
#define SET1 _mm512_set1_ps
#else
typedef __m256 vec;
#define LANES 8
#define FMA _mm256_fmadd_ps
#define SET1 _mm256_set1_ps
#endif
static long iters;
static void *run(void *p) {
  float seed = *(float *)p;
  vec x = SET1(1.0001f), y = SET1(0.9999f);
  vec a0 = SET1(seed), a1 = SET1(seed + 1), a2 = SET1(seed + 2), a3 = SET1(seed + 3), a4 = SET1(seed + 4),
      a5 = SET1(seed + 5), a6 = SET1(seed + 6), a7 = SET1(seed + 7), a8 = SET1(seed + 8), a9 = SET1(seed + 9),
      a10 = SET1(seed + 10), a11 = SET1(seed + 11);
  for (long i = 0; i < iters; i++) {
    a0 = FMA(a0, x, y); a1 = FMA(a1, x, y); a2 = FMA(a2, x, y); a3 = FMA(a3, x, y);
    a4 = FMA(a4, x, y); a5 = FMA(a5, x, y); a6 = FMA(a6, x, y); a7 = FMA(a7, x, y);
    a8 = FMA(a8, x, y); a9 = FMA(a9, x, y); a10 = FMA(a10, x, y); a11 = FMA(a11, x, y);
  }
  vec s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  float out[LANES];
  memcpy(out, &s, sizeof out);
  *(float *)p = out[0];
  return 0;
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  iters = atol(argv[2]);
  pthread_t t[256];
  float seeds[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) { seeds[i] = (float)i; pthread_create(&t[i], 0, run, &seeds[i]); }
  for (int i = 0; i < n; i++) pthread_join(t[i], 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%f\n", n * (double)iters * 12 * LANES * 2 / s / 1e9);
  return 0;
}
"""


def build_probe(workdir: Path) -> Path:
    """The FMA probe, compiled for this host's widest float vectors (AVX-512 where /proc/cpuinfo lists avx512f)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("cpu_matmul_peak: no C compiler (cc) on PATH to build the FMA probe")
    flags = Path("/proc/cpuinfo").read_text().split()
    isa = ["-mavx512f"] if "avx512f" in flags else ["-mavx2"]
    src, exe = workdir / "probe.c", workdir / "probe"
    src.write_text("#include <string.h>\n" + PROBE_C)
    subprocess.run([cc, "-O2", "-mfma", *isa, "-pthread", str(src), "-o", str(exe)], check=True)
    return exe


@triton.jit
def matmul_hot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                      HOT_A: tl.constexpr, HOT_B: tl.constexpr):  # fmt: skip
    """Tutorial 03's kernel, except that A (HOT_A) or B (HOT_B) is read at its first k tile every step."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None] * sam + offs_k[None, :] * sak)
    b_ptrs = b_ptr + (offs_k[:, None] * sbk + offs_bn[None, :] * sbn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK * sak * (1 - HOT_A)
        b_ptrs += BK * sbk * (1 - HOT_B)
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :], acc,
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))  # fmt: skip


def sides(n: int, tiles: tuple[int, int, int]) -> dict[str, object]:
    """Each side's call, checked once against torch where it computes a product of its own."""
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    an, bn = a.numpy(), b.numpy()
    bm, bn_, bk = tiles
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn_),)
    args = (a, b, c, n, n, n, n, 1, n, 1, n, 1)

    def ours() -> None:
        matmul_kernel[grid](*args, BM=bm, BN=bn_, BK=bk, GROUP_M=8)

    def hot(ha: int, hb: int):
        return lambda: matmul_hot_kernel[grid](*args, BM=bm, BN=bn_, BK=bk, GROUP_M=8, HOT_A=ha, HOT_B=hb)

    ours()
    if not torch.allclose(c, a @ b, rtol=1e-3, atol=1e-2):
        raise SystemExit("cpu_matmul_peak: cpu_ref's product differs from torch's")
    return {
        "cpu_ref": ours,
        "cpu_ref, no operand reuse": lambda: matmul_kernel[grid](
            *args, BM=bm, BN=bn_, BK=bk, GROUP_M=8, reuse_dot_operands=False
        ),
        "cpu_ref, A in cache": hot(1, 0),
        "cpu_ref, B in cache": hot(0, 1),
        "cpu_ref, A and B in cache": hot(1, 1),
        "torch.mm (MKL)": lambda: torch.mm(a, b, out=c),
        "numpy (OpenBLAS)": lambda: np.matmul(an, bn),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--tiles", default="128x64x32", help="BMxBNxBK of cpu_ref's kernel")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads(), help="threads of the FMA probe")
    ap.add_argument("--out", type=Path, help="folder for peak.json and peak.md")
    args = ap.parse_args()
    triton_backend_sdk.use("cpu_ref")
    tiles = tuple(int(x) for x in args.tiles.split("x"))
    flop = 2 * args.size**3
    with tempfile.TemporaryDirectory() as tmp:
        probe = build_probe(Path(tmp))
        fns = sides(args.size, tiles)
        for fn in fns.values():
            fn()
        gflops: dict[str, list[float]] = {"FMA peak": [], **{k: [] for k in fns}}

        def probe_gflops() -> float:
            cmd = [str(probe), str(args.threads), "20000000"]
            return float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)

        for _ in range(args.rounds):
            before = probe_gflops()
            for name, fn in fns.items():
                gflops[name].append(flop / min(timed_calls(fn, 3)) / 1e9)
            gflops["FMA peak"].append(max(before, probe_gflops()))
    peak = gflops["FMA peak"]
    rows = []
    for name, v in gflops.items():
        frac = statistics.median(x / p for x, p in zip(v, peak))
        rows.append({"side": name, "median_gflops": statistics.median(v), "min": min(v), "max": max(v),
                     "median_fraction_of_peak": frac})  # fmt: skip
    lines = [
        f"{args.size}³ fp32, cpu_ref tiles {args.tiles}, {args.rounds} rounds; FMA peak on {args.threads} threads",
        "",
        "| side | median GFLOP/s | range | fraction of the round's FMA peak (median) |",
        "|---|---|---|---|",
        *(
            f"| {r['side']} | {r['median_gflops']:.0f} | {r['min']:.0f}-{r['max']:.0f} | "
            f"{r['median_fraction_of_peak']:.3f} |"
            for r in rows
        ),
    ]
    print("\n".join(lines))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "peak.json").write_text(json.dumps({"rows": rows, "rounds": gflops}, indent=1) + "\n")
        (args.out / "peak.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
