"""opencl (PoCL on this CPU) against torch on the CPU, ratios from interleaved runs in the same session.

Run explicitly (the file name keeps it out of the default collection): `python -m pytest benchmarks/bench_opencl.py`.
Issue 5 targets: vector add 2^24 ≥ 0.9× torch, softmax 4096² ≥ 0.5×, matmul fp32 2048³ ≥ 50 GFLOP/s.
Skipped with the reason when no OpenCL device is available. The case bodies are triton_backend_sdk.bench.cases' (those
of `triton-sdk bench`), built here at full size for opencl (the matmul's tiles autotuned as there).
"""

from __future__ import annotations

import pytest

from .cases import assert_ok, full


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
    p = full("vector_add", BACKEND)
    compare(p.ours, p.peers["torch"], work=p.work / 1e9, unit="GB/s")
    assert_ok(p)


def test_softmax_4096(compare):
    p = full("softmax", BACKEND)
    compare(p.ours, p.peers["torch"], rounds=5)
    assert_ok(p)


def test_layer_norm_fwd_4096(compare):
    p = full("layer_norm_fwd", BACKEND)
    compare(p.ours, p.peers["torch"], rounds=5)
    assert_ok(p)


def test_matmul_2048(compare):
    p = full("matmul_fp32", BACKEND)
    compare(p.ours, p.peers["torch"], work=p.work / 1e9, unit="GFLOP/s", rounds=1)
    assert_ok(p)
