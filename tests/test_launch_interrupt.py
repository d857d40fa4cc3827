"""Ctrl-C stops a long launch between programs, and KeyboardInterrupt reaches the caller; the programs not yet
started do not run, and the next launch runs normally. Before, SIGINT waited for every program of the launch.
cpu_ref: the launching thread checks for signals between its chunks of programs (csrc/launcher.cpp). opencl: a launch
predicted to be long is enqueued in pieces, waited for one by one (backends/opencl/launch_chunks.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import _unavailable

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import torch, triton, triton.language as tl
    import triton_backend_sdk

    backend, threads = sys.argv[1], int(sys.argv[2])
    triton_backend_sdk.use(backend)

    @triton.jit
    def spin(X, Y, K, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.load(X + offs)
        for _ in range(K):
            acc = acc * 0.999999 + 1e-6
        tl.store(Y + offs, acc)

    programs = 4096
    x = torch.rand(programs * 16)
    y = torch.zeros_like(x)
    spin[(1,)](x, y, 1, BLOCK=16)  # compile
    t = time.perf_counter()
    spin[(64,)](x, y, 200_000, BLOCK=16)
    per_program = (time.perf_counter() - t) / 64
    if backend == "cpu_ref":
        from triton_backend_sdk import _native

        _native.set_num_threads(threads)
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t = time.perf_counter()
    try:
        spin[(programs,)](x, y, 200_000, BLOCK=16)
        print("NOT INTERRUPTED")
    except KeyboardInterrupt:
        elapsed = time.perf_counter() - t
        done = int((y[: programs * 16] != 0).view(programs, 16).all(1).sum())
        print(f"INTERRUPTED {elapsed:.2f} {programs * per_program:.2f} {done}")
    y.zero_()
    spin[(8,)](x, y, 10, BLOCK=16)
    ref = x[:128].clone()
    for _ in range(10):
        ref = ref * 0.999999 + 1e-6
    print("NEXT", bool(torch.allclose(y[:128], ref)))
    """
)


def _run(backend: str, threads: int, tmp_path) -> str:
    path = tmp_path / "interrupt.py"
    path.write_text(SCRIPT)
    env = {"TRITON_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, str(path), backend, str(threads)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("backend, threads", [("cpu_ref", 1), ("cpu_ref", 2), ("opencl", 0)])
def test_ctrl_c_stops_a_long_launch(tmp_path, backend, threads):
    if backend == "opencl" and _unavailable("opencl"):
        pytest.skip(str(_unavailable("opencl")))
    out = _run(backend, threads, tmp_path)
    assert "INTERRUPTED" in out, out
    elapsed, full, done = out.split("INTERRUPTED")[1].split("\n")[0].split()
    # the whole launch would take `full` seconds; it stops within about a chunk (1/32 of it) of the signal
    assert float(elapsed) < 0.3 + float(full) / 8 + 2.0, out
    assert int(done) < 4096, out
    assert "NEXT True" in out, out
