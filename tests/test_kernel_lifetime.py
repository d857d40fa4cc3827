"""Loaded kernels live exactly as long as Triton holds them, whichever driver is active when they go.

The op suite's xdist workers grew to 3.5 GB by two thirds of the CI run (one crashed near its end): every opencl
kernel freed while cpu_ref was active stayed registered with its built program (Triton's `CompiledKernel.__del__`
unloads through the driver active at that time), and the op suite kept each one-off specialization in its kernel's
JIT cache.
"""

from __future__ import annotations

import gc

import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton_backend_sdk.conformance.cases import all_cases
from triton_backend_sdk.conformance.suite import run_case
from triton_backend_sdk.plugins import forget_kernels, jit_function_of


def _make_kernel():
    """A fresh JITFunction (its own cache), so that the test controls every reference to its kernels."""

    @triton.jit
    def scaled(X, Y, n, S: tl.constexpr):
        offs = tl.arange(0, 64)
        m = offs < n
        tl.store(Y + offs, tl.load(X + offs, mask=m) * S, mask=m)

    return scaled


def _live_opencl_kernels() -> int:
    from triton_backend_sdk.backends.opencl.launcher import _KERNELS

    return len(_KERNELS)


def test_opencl_kernel_freed_while_cpu_ref_is_active_is_released(ocl) -> None:
    from triton_backend_sdk.backends.opencl.runtime import runtime_for, selected_device

    rt = runtime_for(selected_device())
    gc.collect()
    kernels_before, programs_before = _live_opencl_kernels(), len(rt.programs)
    fn = _make_kernel()
    x, y = torch.randn(50), torch.zeros(50)
    for s in (2.0, 3.0, 5.0):
        fn[(1,)](x, y, 50, S=s)
        torch.testing.assert_close(y, x * s)
    assert _live_opencl_kernels() == kernels_before + 3
    triton_backend_sdk.use("cpu_ref")
    try:
        forget_kernels(fn)
        gc.collect()
        assert _live_opencl_kernels() == kernels_before
        assert len(rt.programs) == programs_before
    finally:
        triton_backend_sdk.use("opencl")


def test_run_case_keeps_no_kernel_loaded(backend) -> None:
    """Conformance/op-suite runs forget each one-off specialization once it has run: nothing stays loaded."""
    cases = [(c, d, s) for c in all_cases() for d, s in c.params()][::97][:24]
    gc.collect()
    before = _live_opencl_kernels() if backend == "opencl" else 0
    for _ in range(2):
        for case, dtype, shape in cases:
            r = run_case(case, dtype, shape, 7)
            assert r.outcome in ("pass", "unsupported"), r.message
    gc.collect()
    for case, _, _ in cases:
        fn = jit_function_of(case.kernel)
        assert not any(kernel_cache for kernel_cache, *_ in fn.device_caches.values())
    if backend == "opencl":
        assert _live_opencl_kernels() <= before


def test_cpu_ref_library_freed_on_another_thread_is_unlinked_by_the_next_load() -> None:
    """A cpu_ref JIT library whose last holder dies on some other thread (the cyclic GC runs on whichever thread
    allocates) is only retired there; the next load unlinks it under the JIT's lock, never concurrently with a link."""
    import threading

    from triton_backend_sdk.backends.cpu_ref import llvm

    triton_backend_sdk.use("cpu_ref")
    k = _make_kernel()
    x = torch.randn(64)
    y = torch.empty(64)
    k[(1,)](x, y, 50, S=3)
    torch.testing.assert_close(y[:50], x[:50] * 3)
    holder = [next(iter(k.device_caches[0][0].values()))]
    forget_kernels(k)
    llvm._reap()
    t = threading.Thread(target=lambda: (holder.clear(), gc.collect()))
    t.start()
    t.join()
    assert len(llvm._retired) == 1
    k2 = _make_kernel()
    k2[(1,)](x, y, 64, S=2)  # a load: reaps under the lock, then links
    torch.testing.assert_close(y, x * 2)
    assert llvm._retired == []
