"""cpu_ref against torch on the CPU (issue 4 targets), ratios from interleaved runs in the same session. The cases
shared with `triton-sdk bench` are built by triton_backend_sdk.bench.cases (see cases.py)."""

from __future__ import annotations

import time

import torch
import triton
import triton_backend_sdk
from triton_backend_sdk.bench.timing import median_ms
from triton_backend_sdk.demo import add_kernel, softmax_kernel

from .cases import assert_ok, full
from .kernels import int8_matmul_kernel, row_max_loop_kernel

BACKEND = "cpu_ref"  # made active for every case by conftest.active_backend


def test_vector_add_2e24(compare):
    p = full("vector_add", BACKEND)
    info = compare(p.ours, p.peers["torch"], work=p.work / 1e9, unit="GB/s")
    assert_ok(p)
    assert info["ratio"] > 0


def test_softmax_4096(compare):
    p = full("softmax", BACKEND)
    compare(p.ours, p.peers["torch"])
    assert_ok(p)


def test_layer_norm_fwd_4096(compare):
    p = full("layer_norm_fwd", BACKEND)
    compare(p.ours, p.peers["torch.compile"])
    assert_ok(p)


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
    p = full("matmul_fp32", BACKEND)
    compare(p.ours, p.peers["torch"], work=p.work / 1e9, unit="GFLOP/s", rounds=5)
    assert_ok(p)


def test_matmul_int8_2048(compare):
    """int8 operands, int32 results (codegen/dot_groups.py) against torch._int_mm (oneDNN) on the same tensors."""
    n, (bm, bn, bk) = 2048, (128, 64, 32)
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randint(-128, 128, (n, n), generator=g, dtype=torch.int16).to(torch.int8) for _ in range(2))
    c = torch.empty(n, n, dtype=torch.int32)
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
    compare(
        lambda: int8_matmul_kernel[grid](a, b, c, n, n, n, BM=bm, BN=bn, BK=bk),
        lambda: torch._int_mm(a, b),
        work=2 * n**3 / 1e9,
        unit="GOP/s",
        rounds=5,
    )
    assert torch.equal(c, torch._int_mm(a, b))


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
