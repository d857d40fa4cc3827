"""Many Python threads launching kernels at once, on every SDK backend: first launches of cold kernels, and
concurrent launches of which some fail a `tl.device_assert`.

First launches: Triton's lazy `CompiledKernel._init_handles` takes no lock, so threads making the first launches of
one kernel each load its binary and each overwrites `kernel.module`. cpu_ref linked a fresh JIT library per load, and
the one replaced was unmapped under a thread still running it: the process died with SIGSEGV (5 of 5 runs of the
warmed-then-raced trials below). The stress runs in a subprocess so that a crash fails the test instead of ending the
session: trial 0 with an empty cache (every thread compiles and launches at once through plain `kernel[grid]`), then
trials that drop the in-memory kernels, recompile from the disk cache on the main thread (`warmup`: no handles yet)
and release 8 threads onto the same fresh kernels at once. Results are checked against torch.

Asserts: the state a failing program records is per launch. With one state per module, a failure was lost (another
thread's check cleared it first) or raised in a thread whose launch had not failed, and a launch that found the
state already set ran no programs at all (a silent wrong result). Each thread here must see exactly its own
failures, with the program id it planted, and correct output otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

THREADS = 8


@triton.jit
def _axpb(x_ptr, y_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * A + 1.0, mask=mask)


@triton.jit
def _row_sums(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def _clamp_where(x_ptr, y_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x < lo, lo, tl.minimum(x, hi))
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _int_mix(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, ((a * 3) ^ b) + (a >> 2), mask=mask)


@triton.jit
def _checked_double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(y_ptr + offs, x * 2, mask=mask)


#: a launch: kernel, positional args, constexprs, grid, and the check of its result against torch
Launch = tuple[Any, tuple, dict, tuple, Callable[[], None]]


def _axpb_case(g: torch.Generator) -> Launch:
    n = 700 + int(torch.randint(0, 300, (1,), generator=g))
    x, y = torch.randn(n, generator=g), torch.full((n,), float("nan"))
    check = lambda: torch.testing.assert_close(y, x * 3.0 + 1.0)
    return _axpb, (x, y, n), {"A": 3.0, "BLOCK": 128}, (triton.cdiv(n, 128),), check


def _row_sums_case(g: torch.Generator) -> Launch:
    rows, cols = 37, 50 + int(torch.randint(0, 14, (1,), generator=g))
    x, out = torch.randn(rows, cols, generator=g), torch.full((rows,), float("nan"))
    check = lambda: torch.testing.assert_close(out, x.sum(dim=1), rtol=1e-5, atol=1e-5)
    return _row_sums, (x, out, cols, x.stride(0)), {"BLOCK": 64}, (rows,), check


def _clamp_case(g: torch.Generator) -> Launch:
    n = 500 + int(torch.randint(0, 200, (1,), generator=g))
    x, y = torch.randn(n, generator=g), torch.full((n,), float("nan"))
    check = lambda: torch.testing.assert_close(y, x.clamp(-0.5, 0.75), rtol=0, atol=0)
    return _clamp_where, (x, y, n, -0.5, 0.75), {"BLOCK": 64}, (triton.cdiv(n, 64),), check


def _int_case(g: torch.Generator) -> Launch:
    n = 300 + int(torch.randint(0, 200, (1,), generator=g))
    a = torch.randint(-(2**20), 2**20, (n,), generator=g, dtype=torch.int32)
    b = torch.randint(-(2**20), 2**20, (n,), generator=g, dtype=torch.int32)
    out = torch.zeros(n, dtype=torch.int32)
    check = lambda: torch.testing.assert_close(out, ((a * 3) ^ b) + (a >> 2), rtol=0, atol=0)
    return _int_mix, (a, b, out, n), {"BLOCK": 128}, (triton.cdiv(n, 128),), check


CASES = [_axpb_case, _row_sums_case, _clamp_case, _int_case]


def stress_first_launches(trials: int, cold: int) -> dict[str, Any]:
    """What the subprocess runs (see the module docstring): trial 0 launches the first `cold` cases with an empty
    cache in every thread; returns the launch and failure counts."""
    from triton_backend_sdk.plugins import drop_jit_caches

    failures: list[str] = []
    launches = 0
    lock = threading.Lock()
    for trial in range(trials):
        cases = CASES[:cold] if trial == 0 else CASES
        if trial:
            drop_jit_caches()
            g = torch.Generator().manual_seed(trial)
            for case in cases:
                kernel, args, constexprs, grid, _ = case(g)
                kernel.warmup(*args, grid=grid, **constexprs)
        barrier = threading.Barrier(THREADS)

        def work(t: int, trial: int = trial, cases: list = cases, barrier: threading.Barrier = barrier) -> None:
            nonlocal launches
            g = torch.Generator().manual_seed(1000 * trial + t)
            launches_here = [case(g) for case in cases]
            barrier.wait()
            for kernel, args, constexprs, grid, check in launches_here:
                try:
                    kernel[grid](*args, **constexprs)
                    check()
                except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                    with lock:
                        failures.append(f"trial {trial} thread {t} {kernel.__name__}: {type(e).__name__}: {e}"[:300])
                with lock:
                    launches += 1

        threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    return {"launches": launches, "failures": failures}


def test_threads_first_launches_of_cold_kernels(backend, request, tmp_path):
    """Trial 0: 8 threads compile and launch one kernel at once into an empty cache; trials 1-15 race the first
    launches of 4 kernels. On the previous commit cpu_ref died with SIGSEGV here in 5 of 5 runs."""
    if "@" in request.node.callspec.params["backend"]:
        pytest.skip("an execution variant loads binaries as its backend does")
    env = dict(os.environ, TRITON_DEFAULT_BACKEND=backend, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    trials, cold = 16, 1
    proc = subprocess.run(
        [sys.executable, __file__, str(trials), str(cold)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, f"stress process ended with {proc.returncode}:\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"launches": THREADS * (cold + (trials - 1) * len(CASES)), "failures": []}


def test_concurrent_asserts_reach_their_own_launch(backend):
    """8 threads x 60 launches of one debug kernel; launch j of thread t plants a negative value in program
    (7t + j) % 16 when (t + j) % 3 == 0. Each thread must get exactly those AssertionErrors, each naming its own
    program, and the doubled input from every other launch."""
    grid, block, per_thread = 16, 32, 60
    n = grid * block
    x0 = torch.arange(n, dtype=torch.int32) % 97
    _checked_double[(grid,)](x0, torch.empty_like(x0), n, BLOCK=block, debug=True)  # the first launch, alone
    barrier = threading.Barrier(THREADS)
    problems: list[str] = []
    raised = [0] * THREADS

    def work(t: int) -> None:
        barrier.wait()
        for j in range(per_thread):
            x, y = x0.clone(), torch.full_like(x0, -1)
            fail_pid = (7 * t + j) % grid if (t + j) % 3 == 0 else None
            if fail_pid is not None:
                x[fail_pid * block + (t + j) % block] = -1 - t
            try:
                _checked_double[(grid,)](x, y, n, BLOCK=block, debug=True)
            except AssertionError as e:
                raised[t] += 1
                if fail_pid is None:
                    problems.append(f"thread {t} launch {j}: raised though nothing failed: {e}")
                elif f"program ({fail_pid}, 0, 0)" not in str(e) or "x must be non-negative" not in str(e):
                    problems.append(f"thread {t} launch {j}: expected program {fail_pid}, got: {e}")
                continue
            if fail_pid is not None:
                problems.append(f"thread {t} launch {j}: the failure in program {fail_pid} was lost")
            elif not torch.equal(y, x * 2):
                problems.append(f"thread {t} launch {j}: wrong result in {int((y != x * 2).sum())} elements")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert problems == [], f"{len(problems)} of {THREADS * per_thread} launches wrong:\n" + "\n".join(problems[:10])
    assert raised == [sum((t + j) % 3 == 0 for j in range(per_thread)) for t in range(THREADS)]


if __name__ == "__main__":
    print(json.dumps(stress_first_launches(int(sys.argv[1]), int(sys.argv[2]))))
