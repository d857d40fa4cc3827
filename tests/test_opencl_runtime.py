"""The opencl backend on this machine's OpenCL device (PoCL in CI; NVIDIA in tools/gpu/run_opencl_h200.sh): the
work-group execution model, memory paths, atomics, half types, build errors and device selection, each checked
against torch on random data with masks and ragged sizes. Skipped with the reason when no OpenCL device exists."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from conftest import _unavailable
from triton.compiler import ASTSource

pytestmark = pytest.mark.skipif(bool(_unavailable("opencl")), reason=str(_unavailable("opencl")))


def _runtime():
    from triton_backend_sdk.backends.opencl.runtime import runtime_for, selected_device

    return runtime_for(selected_device())


@triton.jit
def row_stats_kernel(x_ptr, sum_ptr, max_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    tl.store(max_ptr + row, tl.max(tl.where(offs < n, x, -float("inf")), axis=0))


def test_a_1024_wide_reduction_runs_on_128_work_items_with_local_memory(ocl, rng):
    """work_items=128 (a GPU's num_warps=4 × warp 32): the kernel is fixed to 128-work-item groups (the device
    confirms it) and reduces through local memory between barriers."""
    import pyopencl as cl

    src = ASTSource(
        row_stats_kernel,
        {"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 1024},
    )
    k = triton.compile(src, target=triton_backend_sdk.target("opencl"), options={"num_warps": 4, "work_items": 128})
    assert k.metadata.opencl_local_size == 128
    assert k.metadata.shared > 0
    assert "reqd_work_group_size(128, 1, 1)" in k.asm["cl"] and "barrier(CLK_LOCAL_MEM_FENCE)" in k.asm["cl"]
    rows, n = 6, 1000
    x = torch.randn(rows, n, generator=rng)
    s, m = torch.empty(rows), torch.empty(rows)
    k[(rows, 1, 1)](x, s, m, n, 1024)
    torch.testing.assert_close(s, x.sum(1), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(m, x.max(1).values)
    loaded = k.module.owner
    dev = loaded.device
    assert list(loaded.kernel.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev)) == [
        128,
        1,
        1,
    ]


@pytest.mark.parametrize("num_warps,work_items", [(1, 0), (2, 0), (8, 0), (4, 1), (4, 8), (4, 32), (4, 256)])
def test_other_group_sizes_give_the_same_results(ocl, rng, num_warps, work_items):
    """Work-item counts with one-level and two-level partial combining, and per-lane partials (long loops)."""
    rows, n = 5, 777
    x = torch.randn(rows, n, generator=rng)
    s, m = torch.empty(rows), torch.empty(rows)
    row_stats_kernel[(rows,)](x, s, m, n, BLOCK=1024, num_warps=num_warps, work_items=work_items)
    torch.testing.assert_close(s, x.sum(1), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(m, x.max(1).values)


@triton.jit
def axes_kernel(x_ptr, s0_ptr, a1_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(s0_ptr + rn, tl.sum(x, axis=0))
    tl.store(a1_ptr + rm, tl.argmin(x, axis=1))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.cumsum(x, axis=0, reverse=True) - x.max(axis=1)[:, None])


@pytest.mark.parametrize("m,n", [(4, 256), (64, 32), (2, 8)])
def test_axis_reductions_scans_and_broadcast_of_reduced_rows(ocl, rng, m, n):
    x = torch.randn(m, n, generator=rng)
    s0, c = torch.empty(n), torch.empty(m, n)
    a1 = torch.empty(m, dtype=torch.int32)
    axes_kernel[(1,)](x, s0, a1, c, M=m, N=n)
    torch.testing.assert_close(s0, x.sum(0), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(a1.long(), x.argmin(1))
    want = x.flip(0).cumsum(0).flip(0) - x.max(1).values[:, None]
    torch.testing.assert_close(c, want, atol=1e-4, rtol=1e-5)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(
            a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0
        )
        b = tl.load(
            b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0
        )
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(
        c_ptr + rm[:, None] * N + rn[None, :],
        acc.to(c_ptr.dtype.element_ty),
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_tiled_matmul_with_ragged_edges(ocl, rng, dtype):
    M, N, K = 77, 45, 101
    a, b = torch.randn(M, K, generator=rng).to(dtype), torch.randn(K, N, generator=rng).to(dtype)
    c = torch.empty(M, N, dtype=dtype)
    matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, BM=32, BN=32, BK=16)
    want = (a.double() @ b.double()).to(dtype)
    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-3}
    torch.testing.assert_close(c, want, **tol)


@triton.jit
def half_math_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x, y = tl.load(x_ptr + offs, mask=m), tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * y + x - y, mask=m)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_round_like_native_half_arithmetic(ocl, rng, dtype):
    n = 3000
    x, y = (torch.randn(n, generator=rng) * 40).to(dtype), (torch.randn(n, generator=rng) * 40).to(dtype)
    out = torch.empty_like(x)
    half_math_kernel[(triton.cdiv(n, 512),)](x, y, out, n, BLOCK=512)
    want = x * y + x - y  # torch rounds each op to the half type, as a GPU computing in half does
    assert torch.equal(out, want)


@triton.jit
def f64_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.sqrt(x * x + 1.0) / 3.0, mask=m)


def test_fp64_where_the_device_has_it(ocl, rng):
    if "fp64" not in triton_backend_sdk.backend_class("opencl").describe(None).supported_dtypes:
        pytest.skip("device has no cl_khr_fp64")
    n = 1001
    x = torch.randn(n, generator=rng, dtype=torch.float64)
    out = torch.empty_like(x)
    f64_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    torch.testing.assert_close(out, torch.sqrt(x * x + 1.0) / 3.0, rtol=1e-15, atol=0)


@triton.jit
def atomics_kernel(x_ptr, hist_ptr, total_ptr, count_ptr, mx_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + (x % BINS), 1, mask=m)
    tl.atomic_add(total_ptr, tl.sum(tl.where(m, x, 0).to(tl.float32), axis=0))
    old = tl.atomic_add(count_ptr, 1)
    tl.atomic_max(mx_ptr + (x % BINS), x + old * 0, mask=m)


def test_atomics_int_float_scalar_and_masked(ocl, rng):
    n, bins = 5000, 16
    x = torch.randint(0, 1000, (n,), generator=rng, dtype=torch.int32)
    hist, mx = torch.zeros(bins, dtype=torch.int32), torch.full((bins,), -1, dtype=torch.int32)
    total, count = torch.zeros(1), torch.zeros(1, dtype=torch.int32)
    grid = triton.cdiv(n, 256)
    atomics_kernel[(grid,)](x, hist, total, count, mx, n, BINS=bins, BLOCK=256)
    assert torch.equal(hist, torch.bincount(x.long() % bins, minlength=bins).int())
    assert count.item() == grid
    torch.testing.assert_close(total, x.double().sum().float().reshape(1), rtol=1e-6, atol=0)
    want = torch.full((bins,), -1, dtype=torch.int32).scatter_reduce(0, (x % bins).long(), x, "amax")
    assert torch.equal(mx, want)


@triton.jit
def scale_inplace_kernel(x_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


@pytest.mark.parametrize("zero_copy", [True, False])
def test_views_in_place_updates_and_both_memory_paths(ocl, rng, zero_copy, monkeypatch):
    """A view with an offset into a larger storage, updated in place; the copy path (discrete devices) is forced on
    PoCL too, and memory outside the masked range stays untouched on both."""
    rt = _runtime()
    if zero_copy and not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    monkeypatch.setattr(rt, "zero_copy", zero_copy)
    base = torch.randn(3000, generator=rng)
    before = base.clone()
    view = base[1000:2500]
    scale_inplace_kernel[(triton.cdiv(1200, 256),)](view, 1200, 3.0, BLOCK=256)
    torch.testing.assert_close(base[1000:2200], before[1000:2200] * 3.0)
    assert torch.equal(base[:1000], before[:1000]) and torch.equal(base[2200:], before[2200:])


@triton.jit
def add_into_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@pytest.mark.parametrize("zero_copy", [True, False])
def test_rerun_last_times_the_kernel_again_on_the_same_device_memory(ocl, rng, zero_copy, monkeypatch):
    """`rerun_last` (the GPU benchmark's back-to-back kernel time) runs the last launch again on the memory that
    launch used: the output, cleared between, is computed again (the copy buffer on a device without shared memory,
    the tensor itself with zero-copy), with a flush buffer filled before each run; one time per run."""
    import numpy as np
    import pyopencl as cl

    rt = _runtime()
    if zero_copy and not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    monkeypatch.setattr(rt, "zero_copy", zero_copy)
    n = 3001
    x, y, out = torch.randn(n, generator=rng), torch.randn(n, generator=rng), torch.empty(n)
    add_into_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    torch.testing.assert_close(out, x + y)
    device_out = rt.last_launch[1][4]  # x, offset, y, offset, out, offset, n
    if zero_copy:
        out.zero_()
    else:
        cl.enqueue_fill_buffer(rt.queue, device_out, np.float32(0), 0, 4 * n).wait()
    times = rt.rerun_last(3, flush_bytes=1 << 20)
    assert len(times) == 3 and all(isinstance(t, int) and t > 0 for t in times)
    if zero_copy:
        torch.testing.assert_close(out, x + y)
    else:
        back = np.empty(n, np.float32)
        cl.enqueue_copy(rt.queue, back, device_out).wait()
        torch.testing.assert_close(torch.from_numpy(back), x + y)
    assert rt._flush.size >= 1 << 20


def test_a_launch_the_device_refuses_is_named_with_a_hint(ocl, rng, monkeypatch):
    """An enqueue the device refuses (NVIDIA's OpenCL answers OUT_OF_HOST_MEMORY for a one-work-item program whose
    private tile is 64 KiB) raises a DeviceError naming the device, the kernel and the work-items, with what to
    change; the pyopencl error is its cause, and the next launch runs."""
    from triton_backend_sdk.backends.opencl.launcher import Launcher
    from triton_backend_sdk.backends.opencl.runtime import DeviceError

    class Refused(RuntimeError):
        pass

    Refused.__module__ = "pyopencl._cl"  # what the launcher recognises as the device's own error
    n = 1000
    x, y, out = torch.randn(n, generator=rng), torch.randn(n, generator=rng), torch.empty(n)
    add_into_kernel[(4,)](x, y, out, n, BLOCK=256)  # compiled and loaded before the refusal
    with monkeypatch.context() as m:
        m.setattr(Launcher, "_enqueue", lambda *a: (_ for _ in ()).throw(Refused("OUT_OF_HOST_MEMORY")))
        with pytest.raises(DeviceError, match=r"refused to launch kernel 'add_into_kernel' at \d+ work-item") as e:
            add_into_kernel[(4,)](x, y, out, n, BLOCK=256)
    assert "OUT_OF_HOST_MEMORY" in str(e.value) and "more work-items per program" in str(e.value)
    assert isinstance(e.value.__cause__, Refused)
    out.zero_()
    add_into_kernel[(4,)](x, y, out, n, BLOCK=256)
    torch.testing.assert_close(out, x + y)


def test_rerun_last_before_any_launch_names_the_reason(ocl, monkeypatch):
    from triton_backend_sdk.errors import ToolError

    rt = _runtime()
    monkeypatch.setattr(rt, "last_launch", None)
    with pytest.raises(ToolError, match="no kernel was launched on this device yet"):
        rt.rerun_last(1)


def test_zero_copy_buffers_start_at_the_device_base_alignment(ocl, rng):
    """A zero-copy buffer begins at CL_DEVICE_MEM_BASE_ADDR_ALIGN below the storage and the kernel adds the rest:
    PoCL does not use less aligned host memory in place (torch aligns to 64 bytes, PoCL asks 128; the first launch
    on such a buffer was many times slower). Storages at every third 4-byte offset from an aligned address, each
    updated in place, the memory around them untouched."""
    rt = _runtime()
    if not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    outer = torch.randn(4096, generator=rng)
    before = outer.clone()
    host = outer.numpy()  # torch.from_numpy of a slice: a storage that starts where the slice does
    first = (-host.ctypes.data % rt.host_align) // 4  # the element at an aligned address
    for k in range(0, rt.host_align // 4, 3):
        start = first + k
        scale_inplace_kernel[(4,)](torch.from_numpy(host[start : start + 1000]), 1000, 2.0, BLOCK=256)
        before[start : start + 1000] *= 2.0
    torch.testing.assert_close(outer, before)
    assert all(base % rt.host_align == 0 for base, _ in rt._host_buffers)


def test_zero_copy_buffers_kept_are_few_and_reused_for_the_same_tensor(ocl, rng):
    """Launches on fresh tensors (as Inductor allocates every output) keep at most HOST_BUFFER_CACHE buffers: more,
    over memory that was freed, fragmented the heap so that each fresh output came from fresh pages. A relaunch on
    the same tensor reuses its buffer."""
    from triton_backend_sdk.backends.opencl.runtime import HOST_BUFFER_CACHE

    rt = _runtime()
    if not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    for _ in range(3 * HOST_BUFFER_CACHE):
        x = torch.randn(1000, generator=rng)
        want = x * 2.0
        scale_inplace_kernel[(4,)](x, 1000, 2.0, BLOCK=256)
        torch.testing.assert_close(x, want)
        assert len(rt._host_buffers) <= HOST_BUFFER_CACHE
    kept = dict(rt._host_buffers)
    scale_inplace_kernel[(4,)](x, 1000, 2.0, BLOCK=256)
    torch.testing.assert_close(x, want * 2.0)
    assert any(rt._host_buffers.get(key) is buf for key, buf in kept.items())


def test_pointer_arguments_other_than_cpu_tensors_are_refused_with_the_argument_name(ocl):
    x = torch.zeros(16)

    class Address:
        """Has what Triton needs to type a pointer, but no memory the backend can hand to a device."""

        dtype = torch.float32

        def data_ptr(self) -> int:
            return x.data_ptr()

    with pytest.raises(TypeError, match="'x_ptr' must be a torch CPU tensor"):
        scale_inplace_kernel[(1,)](Address(), 16, 2.0, BLOCK=16)

    class TypedPointer(Address):
        """FlagGems' TypedPtr: also answers untyped_storage() with itself (no device, no size)."""

        def untyped_storage(self) -> TypedPointer:
            return self

    with pytest.raises(TypeError, match="'x_ptr' must be a torch CPU tensor .*no device or storage size"):
        scale_inplace_kernel[(1,)](TypedPointer(), 16, 2.0, BLOCK=16)


def test_build_failure_shows_the_log_and_the_source_around_the_line():
    from triton_backend_sdk.backends.opencl.runtime import build_program, selected_device
    from triton_backend_sdk.errors import ToolError

    bad = "__kernel void k(__global float *p) {\n  float a = 1.0f;\n  p[0] = a + undefined_name;\n}\n"
    with pytest.raises(ToolError) as e:
        build_program(selected_device(), bad, "k", ["-cl-std=CL1.2"])
    msg = str(e.value)
    assert "undefined_name" in msg and "rejected kernel 'k'" in msg
    assert ">>     3 |   p[0] = a + undefined_name;" in msg


def test_a_binary_the_driver_rejects_is_rebuilt_from_the_embedded_source(ocl, rng):
    from triton_backend_sdk.backends.opencl.runtime import (
        CONTAINER_MAGIC,
        is_pocl,
        load_kernel,
        parse_container,
        selected_device,
    )

    src = ASTSource(
        scale_inplace_kernel, {"x_ptr": "*fp32", "n": "i32", "s": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 128}
    )
    k = triton.compile(src, target=triton_backend_sdk.target("opencl"))
    blob = k.asm["clbin"]
    header, binary, source = parse_container(blob)
    assert blob.startswith(CONTAINER_MAGIC) and "__kernel void tb_scale_inplace_kernel" in source
    assert bool(binary) != is_pocl(selected_device())  # PoCL: source only (its binaries are unsafe to keep)
    import json

    header["binary"] = 7
    h = json.dumps(header).encode()
    broken = CONTAINER_MAGIC + len(h).to_bytes(4, "little") + h + b"garbage" + source.encode()
    assert load_kernel(broken).name == "scale_inplace_kernel"


def test_device_selection_by_index_name_and_a_clear_error():
    from triton_backend_sdk.backends.opencl.runtime import DeviceError, _pick, all_devices, listing

    devices = all_devices()
    assert _pick("0", devices) is devices[0]
    assert _pick(devices[0].name[:6].lower(), devices).name == devices[0].name
    with pytest.raises(DeviceError, match="no OpenCL device matches 'no-such-device'; devices: 0: "):
        _pick("no-such-device", devices)
    assert devices[0].name.strip() in listing()


def _run(code: str, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k != "TRITON_DEFAULT_BACKEND"}
    e.update(env)
    p = subprocess.run([sys.executable, "-c", code], check=False, env=e, capture_output=True, text=True)
    assert p.returncode == 0, f"child failed ({p.returncode}):\n{p.stderr[-3000:]}"
    return p.stdout


def test_registered_never_active_by_default_and_import_light():
    out = _run(
        "import sys, triton; from triton.backends import backends; "
        "print('opencl' in backends, backends['opencl'].driver.is_active(), 'pyopencl' in sys.modules)"
    )
    assert out.split() == ["True", "False", "False"]
    if tuple(int(p) for p in triton.__version__.split(".")[:2]) < (3, 7):
        pytest.skip("Triton < 3.7 does not read TRITON_DEFAULT_BACKEND when another driver (CUDA) is active")
    out = _run("import triton; print(type(triton.runtime.driver.active).__name__)", TRITON_DEFAULT_BACKEND="opencl")
    assert out.strip() == "OpenCLDriver"


def test_cli_lists_the_opencl_device():
    out = _run("from triton_backend_sdk.cli import main; main(['devices'])")
    line = next(ln for ln in out.splitlines() if ln.startswith("opencl"))
    assert "arch=" in line and "warp=" in line


@triton.jit
def swap_carries_kernel(out_ptr, n_iter, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = r.to(tl.float32)
    b = r.to(tl.float32) * 10
    s, t = 1, 2
    for _ in range(n_iter):
        a, b = b, a + 1  # each new carry reads the other's old value: a parallel assignment
        s, t = t, s
    tl.store(out_ptr + r, a + b * 1000 + s * 1000000 + t * 10000000)


@pytest.mark.parametrize("n_iter", [0, 1, 2, 5])
def test_loop_carries_are_assigned_in_parallel(ocl, n_iter):
    block = 256
    out = torch.empty(block)
    swap_carries_kernel[(1,)](out, n_iter, BLOCK=block)
    a, b = torch.arange(block, dtype=torch.float32), torch.arange(block, dtype=torch.float32) * 10
    s, t = 1, 2
    for _ in range(n_iter):
        a, b = b, a + 1
        s, t = t, s
    torch.testing.assert_close(out, a + b * 1000 + s * 1000000 + t * 10000000)


@triton.jit
def spin_then_count_kernel(flag_ptr, lock_ptr, count_ptr):
    # every program takes a spin lock (atomic_cas) and polls a volatile flag: both must be seen alike by the whole
    # work-group, or its work-items would part ways at the next barrier
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = tl.load(count_ptr, volatile=True)
    tl.store(count_ptr, c + tl.load(flag_ptr, volatile=True))
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def test_spin_lock_and_volatile_scalar_loads_stay_uniform(ocl):
    flag, lock, count = (
        torch.ones(1, dtype=torch.int32),
        torch.zeros(1, dtype=torch.int32),
        torch.zeros(1, dtype=torch.int32),
    )
    spin_then_count_kernel[(64,)](flag, lock, count)
    assert count.item() == 64 and lock.item() == 0


@triton.jit
def carried_ptr_dot_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        x = tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        y = tl.load(b, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision="ieee")
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("bn", [64, 8])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("work_items", [0, 128])
def test_dot_through_loop_carried_pointer_tiles(ocl, rng, bn, transposed, work_items):
    """Pointer rows that are consecutive (read as contiguous runs by a one-work-item program) and, transposed, rows
    that are not (gathered); the register-blocked vector dot of the CPU device and the local-memory dot of 128."""
    M, N, K = 30, bn - 3, 70
    a, b = torch.randn(M, K, generator=rng), torch.randn(K, N, generator=rng)
    if transposed:
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    c = torch.empty(M, N)
    carried_ptr_dot_kernel[(1,)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), BM=32, BN=bn, BK=16, work_items=work_items
    )
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
