"""The opencl backend adapts to a device's limits instead of failing: a kernel whose scratch area (reductions, scans,
dots, layout changes, histograms) exceeds the device's local memory keeps it in global memory, one region per program
of a buffer the launcher passes; a kernel the built program cannot run on as many work-items as it was rendered for
(CL_KERNEL_WORK_GROUP_SIZE, register use on NVIDIA) is rendered again for the largest power of two it allows.

PoCL's limits are too large to hit, so the device tests give the backend a descriptor with small ones (1 KiB of local
memory, a 32-work-item maximum) or a fake work-group size query, and run real kernels both ways on random data with
ragged masks and several programs, against torch. The golden tests need no device.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from conftest import _unavailable
from golden_ir import check_lines
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.ir import parse_ttir

# ---- golden: the scratch area's address space is a render decision ------------------------------------------------

SUM_ROWS = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %q : tensor<1024x!tt.ptr<f32>>
    %z = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s2 = arith.addf %a, %b : f32
      tt.reduce.return %s2 : f32
    }) : (tensor<1024xf32>) -> f32
    tt.store %y, %z : !tt.ptr<f32>
    tt.return
  }
}"""


def _render(space: str):
    return render_module(
        parse_ttir(SUM_ROWS), "k", OPENCL_RULES, OPENCL, 128, frozenset(), "test-device", scratch_space=space
    )


def test_scratch_in_local_memory_by_default():
    rk = _render("local")
    assert rk.scratch_space == "local" and rk.global_scratch_stride == 0
    check_lines(
        rk.source,
        """
        union tb_scratch { float tb_float[
        __kernel void tb_k(__global float *a_x0_base, ulong a_x0_off, __global float *a_y0_base, ulong a_y0_off, int tb_grid0, int tb_grid1, int tb_grid2) {
        __local union tb_scratch tb_smem_area __attribute__((aligned(16)));
        __local union tb_scratch *tb_smem = &tb_smem_area;
        barrier(CLK_LOCAL_MEM_FENCE);
        tb_smem->tb_float[lid] =
        barrier(CLK_LOCAL_MEM_FENCE);
        """,
    )
    assert "__global uchar" not in rk.source


def test_scratch_in_global_memory_is_this_programs_region_with_global_barriers():
    """The kernel takes the buffer after its own parameters; program (x, y, z)'s region starts at its linear id ×
    the per-program bytes (rounded to 128); every barrier fences global memory too; no local memory is declared."""
    rk = _render("global")
    local = _render("local")
    assert rk.scratch_space == "global" and rk.scratch_bytes == local.scratch_bytes
    assert rk.global_scratch_stride == -(-local.scratch_bytes // 128) * 128
    check_lines(
        rk.source,
        f"""
        __global float *a_y0_base, ulong a_y0_off, __global uchar *tb_gscratch, int tb_grid0, int tb_grid1, int tb_grid2) {{
        const int tb_pid2 = (int)(get_group_id(2) + get_global_offset(2)), tb_npid2 = tb_grid2;
        __global union tb_scratch *tb_smem = (__global union tb_scratch *)(tb_gscratch + (((ulong)tb_pid2 * (ulong)tb_npid1 + (ulong)tb_pid1) * (ulong)tb_npid0 + (ulong)tb_pid0) * {rk.global_scratch_stride}UL);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        tb_smem->tb_float[lid] =
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        """,
    )
    assert "__local" not in rk.source and "barrier(CLK_LOCAL_MEM_FENCE);" not in rk.source


# ---- on the device: real kernels with small limits ------------------------------------------------------------------

needs_device = pytest.mark.skipif(bool(_unavailable("opencl")), reason=str(_unavailable("opencl")))


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch):
    """`limits(**fields)`: opencl active for the test with the device's descriptor changed by `fields`."""
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.backends.opencl.compiler import OpenCLBackend
    from triton_backend_sdk.driver import activate
    from triton_backend_sdk.plugins import drop_jit_caches

    base = OpenCLBackend.describe(None)
    previous = driver.active

    def apply(**fields):
        derived = dataclasses.replace(base, **fields)
        monkeypatch.setattr(OpenCLBackend, "describe", classmethod(lambda cls, target=None: derived))
        triton_backend_sdk.use("opencl")
        drop_jit_caches()
        return derived

    yield apply
    monkeypatch.undo()
    activate(previous)
    drop_jit_caches()


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _rows(x_ptr, sum_ptr, max_ptr, cum_ptr, t_ptr, col_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Per block of rows: row sums and maxima, a cumulative sum along rows, the transposed block, and column sums
    added atomically (a reduction, a scan, a layout change and tensor atomics, all through the scratch area)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    tl.store(sum_ptr + rm, tl.sum(x, axis=1), mask=rm < M)
    tl.store(max_ptr + rm, tl.max(tl.where(mask, x, -float("inf")), axis=1), mask=rm < M)
    tl.store(cum_ptr + rm[:, None] * N + rn[None, :], tl.cumsum(x, axis=1), mask=mask)
    tl.store(t_ptr + rn[:, None] * M + rm[None, :], tl.trans(x), mask=(rn[:, None] < N) & (rm[None, :] < M))
    tl.atomic_add(col_ptr + rn, tl.sum(x, axis=0), mask=rn < N)


@triton.jit
def _hist(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=BINS)  # out of range: not counted
    tl.atomic_add(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))


def _run_matmul(rng: torch.Generator, m: int, n: int, k: int, **kw) -> triton.compiler.CompiledKernel:
    a, b = torch.randn(m, k, generator=rng), torch.randn(k, n, generator=rng)
    c = torch.empty(m, n)
    kern = _matmul[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BM=32, BN=32, BK=16, **kw)
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
    return kern


def _run_rows(rng: torch.Generator, m: int, n: int, **kw) -> triton.compiler.CompiledKernel:
    x = torch.randn(m, n, generator=rng)
    s, mx, cum, t, col = torch.empty(m), torch.empty(m), torch.empty(m, n), torch.empty(n, m), torch.zeros(n)
    kern = _rows[(triton.cdiv(m, 16),)](x, s, mx, cum, t, col, m, n, BM=16, BN=64, **kw)
    torch.testing.assert_close(s, x.sum(1), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(mx, x.max(1).values)
    torch.testing.assert_close(cum, x.cumsum(1), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(t, x.T.contiguous())
    torch.testing.assert_close(col, x.sum(0), atol=1e-4, rtol=1e-5)
    return kern


def _run_hist(rng: torch.Generator, n: int, **kw) -> triton.compiler.CompiledKernel:
    x = torch.randint(-3, 70, (n,), generator=rng, dtype=torch.int32)
    out = torch.zeros(64, dtype=torch.int32)
    kern = _hist[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512, BINS=64, **kw)
    want = torch.bincount(x[(x >= 0) & (x < 64)].long(), minlength=64).int()
    assert torch.equal(out, want)
    return kern


@needs_device
@pytest.mark.parametrize("work_items", [128, 0])
@pytest.mark.parametrize("shared", [None, 1024])
def test_kernels_with_scratch_over_local_memory_use_global_memory(limits, rng, work_items, shared):
    """A dot, reductions + a scan + a transpose + tensor atomics, and a histogram, over several programs with ragged
    edges: with the device's own local memory (scratch local) and with 1 KiB (scratch global), both right; grids of
    different sizes reuse the launcher's one scratch buffer, grown as needed."""
    desc = limits() if shared is None else limits(shared_memory_bytes=shared)
    kernels = [
        _run_matmul(rng, 45, 70, 37, work_items=work_items),
        _run_matmul(rng, 100, 97, 20, work_items=work_items),  # more programs: the buffer grows
        _run_rows(rng, 37, 50, work_items=work_items),
        _run_rows(rng, 70, 64, work_items=work_items),
        _run_hist(rng, 1500, work_items=work_items),
    ]
    for kern in kernels:
        md = kern.metadata
        src = kern.asm["cl"]
        if shared is None or md.global_scratch_size == 0:
            assert "tb_gscratch" not in src and md.opencl_adapted == []
            continue
        assert (
            md.shared == 0 and md.global_scratch_size % 128 == 0 and md.global_scratch_size > desc.shared_memory_bytes
        )
        assert "__global uchar *tb_gscratch" in src and "__local" not in src
        (note,) = md.opencl_adapted
        assert note.startswith("scratch in global memory") and note.endswith("local memory has 1024")
    if shared is not None and work_items:
        # on 128 work-items the dot's A and B tiles (2 × 32 × 16 floats) alone exceed 1 KiB, and the rows kernel
        # publishes its 16 × 64 block for the transpose; one work-item (the CPU model) reads its tiles in place
        assert all(kern.metadata.global_scratch_size >= 4096 for kern in kernels[:4])


@needs_device
def test_a_loop_dot_whose_two_staging_copies_exceed_local_memory_keeps_one(limits, rng):
    """With double_buffer, at 128 work-items the 32x32x16 dot in a loop stages A (32 rows of 20 floats) and B (16 x 32): 4608 bytes a
    copy. With 6 KiB of local memory two copies do not fit, one does: rendered again single-buffered (no parity
    variable, two barriers a step), scratch still local, said in the metadata, and right."""
    limits(shared_memory_bytes=6144)
    kern = _run_matmul(rng, 45, 70, 37, work_items=128, double_buffer=True)
    md, src = kern.metadata, kern.asm["cl"]
    assert md.shared == 4608 and md.global_scratch_size == 0 and "db0" not in src
    note = "one staging copy per dot in a loop (two barriers a step): the kernel needs 9216 bytes of local memory"
    assert md.opencl_adapted == [note + " with two; the device's local memory has 6144"]
    limits(shared_memory_bytes=9216)
    kern = _run_matmul(rng, 45, 70, 37, work_items=128, double_buffer=True)
    assert kern.metadata.shared == 9216 and "db0 ^= 1u;" in kern.asm["cl"] and kern.metadata.opencl_adapted == []


def _fake_group_size(monkeypatch: pytest.MonkeyPatch, allowed: int, cache_dir: Path) -> list[int]:
    """Make the built kernel's CL_KERNEL_WORK_GROUP_SIZE `allowed` (as NVIDIA reports 256 for a register-heavy
    kernel); returns the local sizes the query was asked about."""
    from triton_backend_sdk.backends.opencl import runtime

    asked: list[int] = []
    real = runtime.kernel_work_group_size

    def fake(arch: str, source: str, name: str, entry: str) -> int:
        asked.append(int(source.split("reqd_work_group_size(")[1].split(",")[0]))
        return min(allowed, real(arch, source, name, entry))

    monkeypatch.setattr(runtime, "kernel_work_group_size", fake)
    # the fake is not in the cache key: compile, do not look up, and keep what it compiled out of the shared cache
    # (a later run found it there: a kernel adapted to the fake's 100 work-items)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache_dir))
    return asked


@needs_device
def test_a_kernel_the_device_runs_on_fewer_work_items_is_rendered_for_them(limits, rng, monkeypatch, tmp_path):
    """Rendered for 128 work-items, the built kernel allows 100: rendered again for 64 (the largest power of two),
    said in the metadata, launched with 64, same results; the scratch may then move back to local memory."""
    limits()
    asked = _fake_group_size(monkeypatch, 100, tmp_path)
    for kern in (_run_matmul(rng, 45, 70, 37, work_items=128), _run_rows(rng, 37, 50, work_items=128)):
        md = kern.metadata
        assert md.opencl_local_size == 64 and "reqd_work_group_size(64, 1, 1)" in kern.asm["cl"]
        assert md.opencl_adapted == [
            (
                "work-items 128 -> 64: the device runs this kernel with at most 100 work-items per work-group "
                "(CL_KERNEL_WORK_GROUP_SIZE)"
            )
        ]
        assert kern.module.owner.local_size == 64
    assert asked == [128, 64, 128, 64]


@needs_device
def test_num_warps_16_on_a_gpu_like_descriptor_with_both_limits(limits, rng, monkeypatch, tmp_path):
    """The NVIDIA case of upstream test_scan2d/test_dot: a GPU descriptor (warp 32, work-groups of up to 1024, no CPU
    feature) with num_warps 16 asks for 512 work-items, the built kernel allows 256 (its register use), and local
    memory is 1 KiB: rendered for 256 work-items with the scratch in global memory, and right."""
    base = limits()
    limits(
        warp_size=32,
        max_threads_per_program=1024,
        shared_memory_bytes=1024,
        features=tuple(f for f in base.features if f != "device_type_cpu"),
    )
    asked = _fake_group_size(monkeypatch, 256, tmp_path)
    for kern, scratch in (
        (_run_matmul(rng, 45, 70, 37, num_warps=16), "global"),
        (_run_rows(rng, 37, 50, num_warps=16), "global"),
        (_run_hist(rng, 1500, num_warps=16), "local"),  # 64 counters fit in 1 KiB
    ):
        md = kern.metadata
        assert md.opencl_local_size == 256 and md.num_warps == 16
        assert md.opencl_adapted[0] == (
            "work-items 512 -> 256: the device runs this kernel with at most 256 work-items per work-group "
            "(CL_KERNEL_WORK_GROUP_SIZE)"
        )
        if scratch == "global":
            assert md.global_scratch_size > 1024 and md.opencl_adapted[1].startswith("scratch in global memory")
        else:
            assert 0 < md.shared <= 1024 and md.global_scratch_size == 0 and len(md.opencl_adapted) == 1
    assert asked == [512, 256] * 3


@needs_device
def test_the_adapted_compile_is_deterministic(limits, monkeypatch):
    """Compiled twice (not from the cache) from the same source, options and descriptor: the same OpenCL C and
    metadata, so Triton's caches may keep the result."""
    from triton.compiler import ASTSource
    from triton_backend_sdk.backends.opencl.compiler import OpenCLBackend

    limits(shared_memory_bytes=1024, max_threads_per_program=64)
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    sig |= {"BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    target = OpenCLBackend.describe(None).gpu_target()
    opts = {"work_items": 128}
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    a, b = (
        triton.compile(ASTSource(_matmul, sig, {"BM": 32, "BN": 32, "BK": 16}), target=target, options=opts)
        for _ in range(2)
    )
    assert a.asm["cl"] == b.asm["cl"] and a.metadata.opencl_adapted == b.metadata.opencl_adapted
    assert a.metadata.opencl_local_size == 64 and a.metadata.global_scratch_size > 0
    assert a.metadata.opencl_adapted[0] == "work-items 128 -> 64: the device's work-groups hold at most 64 work-items"


@needs_device
def test_limits_lowered_by_environment_for_testing():
    """TRITON_OPENCL_LIMIT_LOCAL_MEM / _WORK_GROUP lower the descriptor's limits (never raise them), so whole suites
    (Triton's upstream tests) run the adapted paths on PoCL; an invalid value is an error naming the variable."""
    import os
    import subprocess
    import sys

    code = (
        "from triton_backend_sdk.backends.opencl.runtime import describe, selected_device as s\n"
        "d = describe(None)\n"
        "print(d.shared_memory_bytes, d.local_memory_bytes, d.max_threads_per_program, s().max_work_group_size)\n"
    )

    def run(**env: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", code]
        return subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=120, check=False)

    out = run(TRITON_OPENCL_LIMIT_LOCAL_MEM="1024", TRITON_OPENCL_LIMIT_WORK_GROUP="64")
    assert out.returncode == 0, out.stderr
    local, local2, group, device_group = (int(x) for x in out.stdout.split())
    assert (local, local2, group) == (1024, 1024, min(64, device_group))
    bad = run(TRITON_OPENCL_LIMIT_LOCAL_MEM="48k")
    assert bad.returncode != 0 and "TRITON_OPENCL_LIMIT_LOCAL_MEM='48k' is not a positive integer" in bad.stderr
