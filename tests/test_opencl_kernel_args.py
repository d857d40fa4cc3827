"""opencl relaunches set again only the by-value arguments that changed (`LoadedKernel.set_args`: PoCL takes ~7 us
per by-value clSetKernelArg): every change of a scalar, of a view's offset or of a buffer reaches the kernel, on both
memory paths, checked against torch."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from conftest import _unavailable


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, object]] = []

    def set_arg(self, i: int, v: object) -> None:
        self.calls.append((i, v))


def _loaded():
    from triton_backend_sdk.backends.opencl.runtime import LoadedKernel

    return LoadedKernel(None, _Recorder(), "k", None, threading.Lock(), 1, 1)


def test_scalars_are_set_again_only_when_their_type_or_bits_change():
    lk = _loaded()
    buf = object()
    lk.set_args([buf, np.uint64(0), np.int32(5), np.float32(0.0)])
    assert [i for i, _ in lk.kernel.calls] == [0, 1, 2, 3]
    lk.kernel.calls.clear()
    lk.set_args([buf, np.uint64(0), np.int32(5), np.float32(0.0)])
    assert [i for i, _ in lk.kernel.calls] == [0], "a buffer is set every time, unchanged scalars are not"
    lk.kernel.calls.clear()
    lk.set_args([buf, np.uint64(64), np.int64(5), np.float32(-0.0)])
    assert [i for i, _ in lk.kernel.calls] == [0, 1, 2, 3], "a new value, a new type and -0.0 after 0.0 are set"
    lk.kernel.calls.clear()
    lk.set_args([np.int32(7), buf, np.int64(5), np.float32(-0.0)])
    assert [i for i, _ in lk.kernel.calls] == [0, 1], "a scalar where a buffer was, and a buffer where a scalar was"
    lk.kernel.calls.clear()
    lk.set_args([np.int32(7), buf, np.int64(5), np.float32("nan")])
    lk.set_args([np.int32(7), buf, np.int64(5), np.float32("nan")])
    assert [i for i, _ in lk.kernel.calls] == [1, 3, 1], "a NaN of the same bits is the same argument"


@triton.jit
def affine_kernel(x_ptr, out_ptr, n, s, t, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * s + t, mask=m)


@pytest.mark.skipif(bool(_unavailable("opencl")), reason=str(_unavailable("opencl")))
@pytest.mark.parametrize("zero_copy", [True, False])
def test_relaunches_see_every_changed_argument(ocl, rng, zero_copy, monkeypatch):
    from triton_backend_sdk.backends.opencl.runtime import runtime_for, selected_device

    rt = runtime_for(selected_device())
    if zero_copy and not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    monkeypatch.setattr(rt, "zero_copy", zero_copy)
    base = torch.rand(5000, generator=rng) + 0.5
    sentinel = 1234.5
    steps = [
        (0, 3001, 2.0, 1.0),
        (0, 3001, 2.0, 1.0),  # all the same: nothing by value is set again
        (0, 1777, 2.0, 1.0),  # n shrinks: the tail keeps the sentinel
        (17, 1777, 2.0, 1.0),  # a view further into the storage: its offset changes
        (17, 1777, -3.5, 0.25),
        (17, 1777, 0.0, 0.0),
        (17, 1777, -0.0, -0.0),  # x * -0.0 + -0.0 is -0.0: the sign bit must reach the kernel
        (5, 4000, float("nan"), 0.0),
        (5, 4000, 1.5, float("inf")),
    ]
    for off, n, s, t in steps:
        x = base[off : off + 4096]
        out = torch.full((4096,), sentinel)
        affine_kernel[(triton.cdiv(n, 256),)](x, out, n, s, t, BLOCK=256)
        want = x[:n] * s + t
        torch.testing.assert_close(out[:n], want, equal_nan=True)
        assert torch.equal(torch.signbit(out[:n]), torch.signbit(want)), (off, n, s, t)
        assert torch.all(out[n:] == sentinel)
