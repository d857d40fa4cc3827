"""PoCL compiles a kernel's work-group function at its first launch, in the launching process, and its LLVM can crash
there (backends/opencl/probe.py). The opencl backend therefore launches each kernel it compiles for PoCL once in a
probe process first: a crash is rendered around (no loop unrolling) or refused with a named reason, never the
user's process dying."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

BM = 16


def _pocl_device():
    from triton_backend_sdk.backends.opencl.runtime import all_devices, is_pocl

    try:
        devs = [d for d in all_devices() if is_pocl(d)]
    except Exception:  # noqa: BLE001 - no OpenCL at all
        devs = []
    if not devs:
        pytest.skip("needs PoCL: only PoCL compiles kernels at their first launch, so only PoCL is probed")
    return devs[0]


class _Job:
    """A hand-written kernel's probe job (the RenderedKernel fields probe_job reads)."""

    def __init__(self, source: str, params: list[list[str]]) -> None:
        self.params, self.global_scratch_stride, self.asserts, self.clock_scale = params, 0, [], False
        self.chunked = False
        self.source, self.entry, self.local_size = source, "tb_probe_test", 1


def _job(dev, body: str) -> dict:
    from triton_backend_sdk.backends.opencl.probe import probe_job

    src = f"__kernel void tb_probe_test(__global int *p_base, ulong p_off, int n) {{ {body} }}"
    return probe_job(dev, [], _Job(src, [["ptr"], ["scalar", "int32", "i32"]]))


def test_probe_reports_a_process_death_and_recovers() -> None:
    from triton_backend_sdk.backends.opencl.probe import Prober

    dev = _pocl_device()
    prober = Prober()
    try:
        fine = "__global int *p = (__global int *)((__global char *)p_base + p_off); p[n] = 1; p[n - 5] = 2;"
        assert prober.first_launch_crash(_job(dev, fine)) is None
        dies = "__global volatile int *p = (__global volatile int *)(ulong)(n + 8); *p = 1;"
        assert prober.first_launch_crash(_job(dev, dies)) == "killed by SIGSEGV"
        assert prober.first_launch_crash(_job(dev, fine)) is None  # a new child after the death
    finally:
        prober.close()


def test_probe_of_a_kernel_that_waits_forever_is_inconclusive() -> None:
    """Zeroed arguments can leave a kernel waiting for a flag nobody sets: the probe gives up and lets it pass."""
    from triton_backend_sdk.backends.opencl.probe import Prober

    dev = _pocl_device()
    prober = Prober()
    try:
        spin = "__global volatile int *p = (__global volatile int *)((__global char *)p_base + p_off); while (!p[n]);"
        assert prober.first_launch_crash(_job(dev, spin), timeout=3.0) is None
        ok = "__global int *p = (__global int *)((__global char *)p_base + p_off); p[0] = n;"
        assert prober.first_launch_crash(_job(dev, ok)) is None
    finally:
        prober.close()


@triton.jit
def _argext_and_scan(x0_ptr, x5_ptr, out0, out1, out2, M, BM: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    mask = rm < M
    x0 = tl.load(x0_ptr + rm, mask=mask)
    x5 = tl.load(x5_ptr + rm, mask=mask)
    full = tl.full((BM,), 448.0, tl.float32)
    first = tl.argmax(tl.where(mask & (full == full), full, 0), axis=0, keep_dims=False).to(tl.int32)  # noqa: PLR0124
    tl.store(out0 + pid, first.to(tl.float16))
    wide = x5.to(tl.float64)
    low = tl.argmin(tl.where(mask & (wide == wide), wide, 0), axis=0, keep_dims=True).to(tl.int32)  # noqa: PLR0124
    low8 = low.to(tl.float32).to(tl.float8e4nv)
    tl.store(out1 + rm, tl.clamp(low8, -4.0, 2.0, propagate_nan=tl.PropagateNan.ALL), mask=mask)
    tl.store(out2 + rm, tl.cumsum(tl.where(mask, -(x0 + 1.5), 0), axis=0), mask=mask)


def test_fuzz_regression_pocl_compiler_crash_at_first_launch(backend) -> None:
    """fuzz seed 302 kernel 384, minimized: PoCL 3.1's LLVM segfaulted (in a MachineFunctionPass) compiling this
    kernel's unrolled loops at its first launch and took the process down; it now runs, rendered without unrolling
    where PoCL crashes, with the results of the other backends."""
    m = 37
    grid = triton.cdiv(m, BM)
    g = torch.Generator().manual_seed(384)
    x0 = torch.randn(m, generator=g) * 4
    x5 = (torch.randn(m, generator=g) * 3).to(torch.float8_e4m3fn)
    out0 = torch.full((grid,), -1.0, dtype=torch.float16)
    out1 = torch.full((m,), -1.0).to(torch.float8_e4m3fn)
    out2 = torch.full((m,), -1.0)
    _argext_and_scan[(grid,)](x0, x5, out0, out1, out2, m, BM=BM)
    assert out0.tolist() == [0.0] * grid
    blocks = [slice(p * BM, min(m, (p + 1) * BM)) for p in range(grid)]
    padded = torch.zeros(grid * BM)
    padded[:m] = torch.nan_to_num(x5.float(), nan=0.0)
    lows = [min(int(torch.argmin(padded[p * BM : (p + 1) * BM])), 2) for p in range(grid)]
    want1 = torch.cat([torch.full((b.stop - b.start,), float(low)) for b, low in zip(blocks, lows)])
    assert out1.float().tolist() == want1.tolist()
    want2 = torch.cat([torch.cumsum(-(x0[b] + 1.5), 0) for b in blocks])
    torch.testing.assert_close(out2, want2, rtol=1e-6, atol=1e-5)


@triton.jit
def _crash_probe_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1.0)


def test_a_kernel_the_device_compiler_crashes_on_is_refused_with_its_source_dumped(ocl, tmp_path, monkeypatch):
    """The refusal's repro hint names a file that exists: the stage fails before the pipeline's own dump, so the
    source it crashed on is written on the way out."""
    from triton import knobs
    from triton_backend_sdk.backends.opencl import runtime
    from triton_backend_sdk.errors import ToolError

    _pocl_device()
    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_SDK_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.setattr(runtime, "first_launch_crash", lambda *a, **k: "killed by SIGSEGV")
    x = torch.randn(BM)
    with pytest.raises(ToolError, match=r"(?s)crashes on kernel '_crash_probe_copy'.*_crash_probe_copy/crash\.cl") as e:
        _crash_probe_copy[(1,)](x, torch.empty(BM), BLOCK=BM)
    assert "also without loop unrolling" in str(e.value)
    assert "__kernel void" in (tmp_path / "dump" / "_crash_probe_copy" / "crash.cl").read_text()
