"""opencl (PoCL on this CPU) against torch on the CPU, ratios from interleaved runs in the same session.

Run explicitly (the file name keeps it out of the default collection): `python -m pytest benchmarks/bench_opencl.py`.
Issue 5 targets: vector add 2^24 ≥ 0.9× torch, softmax 4096² ≥ 0.5×, matmul fp32 2048³ ≥ 50 GFLOP/s.
Skipped with the reason when no OpenCL device is available.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from triton_backend_sdk.demo import add_kernel, softmax_kernel

from .kernels import layer_norm_fwd_kernel, matmul


def _unavailable() -> str | None:
    try:
        from triton_backend_sdk.backends.opencl.runtime import selected_device

        selected_device()
    except Exception as e:  # noqa: BLE001 - pyopencl missing, no ICD, no device
        return f"no usable OpenCL device ({e})"
    return None


BACKEND = "opencl"  # made active for every case by conftest.active_backend
pytestmark = pytest.mark.skipif(bool(_unavailable()), reason=str(_unavailable()))


def test_vector_add_2e24(compare):
    n = 1 << 24
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    compare(
        lambda: add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024),
        lambda: torch.add(x, y, out=out),
        work=3 * 4 * n / 1e9,
        unit="GB/s",
    )
    torch.testing.assert_close(out, x + y)


def test_softmax_4096(compare):
    m = n = 4096
    x, y, ref = torch.randn(m, n), torch.empty(m, n), torch.empty(m, n)
    compare(
        lambda: softmax_kernel[(m,)](y, x, x.stride(0), y.stride(0), n, BLOCK=n),
        lambda: torch.softmax(x, dim=1, out=ref),
        rounds=5,
    )
    torch.testing.assert_close(y, torch.softmax(x, dim=1))


def test_layer_norm_fwd_4096(compare):
    m = n = 4096
    x, w, b = torch.randn(m, n), torch.rand(n), torch.randn(n)
    y, mean, rstd = torch.empty(m, n), torch.empty(m), torch.empty(m)
    compare(
        lambda: layer_norm_fwd_kernel[(m,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=1024),
        lambda: F.layer_norm(x, (n,), w, b, 1e-5),
        rounds=5,
    )
    torch.testing.assert_close(y, F.layer_norm(x, (n,), w, b, 1e-5), atol=1e-4, rtol=1e-4)


def test_matmul_2048(compare):
    s = 2048
    a, b, c = torch.randn(s, s), torch.randn(s, s), torch.empty(s, s)
    compare(lambda: matmul(a, b, c, 64, 64, 32), lambda: torch.mm(a, b), work=2 * s**3 / 1e9, unit="GFLOP/s", rounds=1)
    torch.testing.assert_close(c, a @ b, atol=1e-2, rtol=1e-3)
