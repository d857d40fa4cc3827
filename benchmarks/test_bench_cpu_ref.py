"""cpu_ref against torch on the CPU (issue 4 targets), ratios from interleaved runs in the same session."""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F
import triton
import triton_backend_sdk
from triton_backend_sdk.demo import add_kernel, softmax_kernel

from .conftest import median_ms
from .kernels import layer_norm_fwd_kernel, matmul, row_max_loop_kernel

BACKEND = "cpu_ref"  # made active for every case by conftest.active_backend


def test_vector_add_2e24(compare):
    n = 1 << 24
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    info = compare(
        lambda: add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024),
        lambda: torch.add(x, y, out=out),
        work=3 * 4 * n / 1e9,
        unit="GB/s",
    )
    torch.testing.assert_close(out, x + y)
    assert info["ratio"] > 0


def test_softmax_4096(compare):
    m = n = 4096
    x, y = torch.randn(m, n), torch.empty(m, n)
    ref = torch.empty(m, n)
    compare(
        lambda: softmax_kernel[(m,)](y, x, x.stride(0), y.stride(0), n, BLOCK=n),
        lambda: torch.softmax(x, dim=1, out=ref),
    )
    torch.testing.assert_close(y, torch.softmax(x, dim=1))


def test_layer_norm_fwd_4096(compare):
    m = n = 4096
    x, w, b = torch.randn(m, n), torch.rand(n), torch.randn(n)
    y, mean, rstd = torch.empty(m, n), torch.empty(m), torch.empty(m)
    compiled = torch.compile(lambda x: F.layer_norm(x, (n,), w, b, 1e-5))
    compiled(x)
    compare(
        lambda: layer_norm_fwd_kernel[(m,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=1024),
        lambda: compiled(x),
    )
    torch.testing.assert_close(y, F.layer_norm(x, (n,), w, b, 1e-5), atol=1e-4, rtol=1e-4)


def test_row_max_loop_2048x4096(compare):
    m, n = 2048, 4096
    x, y, ref = torch.randn(m, n), torch.empty(m), torch.empty(m)
    idx = torch.empty(m, dtype=torch.int64)
    compare(
        lambda: row_max_loop_kernel[(m // 32,)](x, y, n, BLOCK_M=32, BLOCK_N=64),
        lambda: torch.max(x, dim=1, out=(ref, idx)),
        work=4 * m * n / 1e9,
        unit="GB/s",
    )
    torch.testing.assert_close(y, x.max(dim=1).values, rtol=0, atol=0)


def test_matmul_2048(compare):
    s = 2048
    a, b, c = torch.randn(s, s), torch.randn(s, s), torch.empty(s, s)
    ref = torch.empty(s, s)
    compare(lambda: matmul(a, b, c), lambda: torch.mm(a, b, out=ref), work=2 * s**3 / 1e9, unit="GFLOP/s", rounds=5)
    torch.testing.assert_close(c, ref, atol=1e-2, rtol=1e-3)


def test_launch_overhead_vector_add_2e12(compare):
    n = 1 << 12
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)

    def launch() -> None:
        add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)

    def many() -> None:
        for _ in range(1000):
            launch()

    launch()
    kernel = next(iter(add_kernel.device_caches[0][0].values()))

    def many_compiled() -> None:
        # the SDK's share: CompiledKernel.run = native launcher (argument packing, 4 programs on the pool)
        for _ in range(1000):
            kernel.run(4, 1, 1, 0, kernel.function, kernel.packed_metadata, None, None, None, x, y, out, n, 1024)

    compiled_us = min(median_ms(many_compiled, 3) for _ in range(3))
    info = compare(many, None)
    info["us_per_launch"] = info["ours_ms"]  # 1000 launches: ms per 1000 = µs per launch
    info["us_per_launch_compiled"] = compiled_us
    torch.testing.assert_close(out, x + y)


def test_compile_cold_and_warm(compare, tmp_path, monkeypatch):
    from triton import knobs

    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path))
    src = triton.compiler.ASTSource(
        softmax_kernel,
        signature={
            "out_ptr": "*fp32",
            "in_ptr": "*fp32",
            "in_stride": "i32",
            "out_stride": "i32",
            "n_cols": "i32",
            "BLOCK": "constexpr",
        },
        constexprs={"BLOCK": 1024},
    )
    target = triton_backend_sdk.target("cpu_ref")
    t = time.perf_counter()
    triton.compile(src, target=target)
    cold_ms = (time.perf_counter() - t) * 1e3
    info = compare(lambda: triton.compile(src, target=target), None)
    info["cold_ms"] = cold_ms
