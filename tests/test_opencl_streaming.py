"""opencl's non-temporal stores and wide-vector tuning on a clang x86 CPU device (render/streaming.py, the language's
`streaming_stores` / `kernel_tunings`, backends/opencl/x86_features.py): golden OpenCL C where the descriptor has
the features and where it has not, and on PoCL results equal to torch for full, masked and misaligned rows."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import FEATURES, render
from triton_backend_sdk.backends.opencl.render.language import X86_NONTEMPORAL_STORE, X86_TUNE_WIDE
from triton_backend_sdk.demo import softmax_kernel

X86 = FEATURES | {X86_NONTEMPORAL_STORE, X86_TUNE_WIDE}


def _row(n: int, ty: str = "f32", masked: bool = False) -> str:
    """y[i] = x[i] + x[i] over n elements of `ty` (masked: i < %n)."""
    mask = ", %m" if masked else ""
    add = "arith.addi" if ty.startswith("i") else "arith.addf"
    return f"""
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %s = tt.splat %n : i32 -> tensor<{n}xi32>
    %m = arith.cmpi slt, %r, %s : tensor<{n}xi32>
    %px = tt.splat %x : !tt.ptr<{ty}> -> tensor<{n}x!tt.ptr<{ty}>>
    %qx = tt.addptr %px, %r : tensor<{n}x!tt.ptr<{ty}>>, tensor<{n}xi32>
    %v = tt.load %qx{mask} : tensor<{n}x!tt.ptr<{ty}>>
    %w = {add} %v, %v : tensor<{n}x{ty}>
    %py = tt.splat %y : !tt.ptr<{ty}> -> tensor<{n}x!tt.ptr<{ty}>>
    %qy = tt.addptr %py, %r : tensor<{n}x!tt.ptr<{ty}>>, tensor<{n}xi32>
    tt.store %qy, %w{mask} : tensor<{n}x!tt.ptr<{ty}>>
"""


def _render(n: int, ty: str = "f32", masked: bool = False, features=X86, local_size: int = 1) -> str:
    args = f"%x: !tt.ptr<{ty}>, %y: !tt.ptr<{ty}>, %n: i32"
    return render(_row(n, ty, masked), args, local_size, features, vector_bits=512)


def test_unmasked_row_streams_float16_vectors_and_fences():
    check_lines(
        _render(4096),
        """
        __attribute__((target("tune=x86-64")))
        __kernel void tb_k(
        for (uint c0 = 0u; c0 < 256u; ++c0) {
        float nt0[16] __attribute__((aligned(64)));
        int full0 = 1;
        for (uint j0 = 0u; j0 < 16u; ++j0) {
        nt0[j0] =
        if (full0 && ((ulong)p0 & 63ul) == 0ul) {
        __builtin_nontemporal_store(*((const float16 *)(nt0)), (__global float16 *)p0);
        } else {
        for (uint j0 = 0u; j0 < 16u; ++j0) { *(
        __builtin_ia32_sfence();
        """,
    )


def test_masked_row_computes_under_the_mask_and_writes_whole_runs_only():
    src = _render(4096, masked=True)
    check_lines(
        src,
        """
        const int tb_m = (((int)(c0 * 16u + j0)) < a_n0);
        nt0[j0] = tb_m ? (
        full0 &= tb_m;
        if (full0 && ((ulong)p0 & 63ul) == 0ul) {
        } else {
        for (uint j0 = 0u; j0 < 16u; ++j0) if ((((int)(c0 * 16u + j0)) < a_n0)) { *(
        """,
    )


@pytest.mark.parametrize(("ty", "n", "vec"), [("f64", 2048, "double8"), ("i32", 4096, "int16")])
def test_vector_of_the_element_type_spans_the_descriptor_width(ty, n, vec):
    assert f"(__global {vec} *)p0" in _render(n, ty)


def test_small_tile_streams_only_in_a_launch_that_writes_32_mib():
    """A 4 KiB tile (below STREAM_BYTES): the non-temporal path under the launch-size test (8192 programs × 4 KiB =
    LAUNCH_STREAM_BYTES), its fence inside it, the ordinary store in the other branch."""
    check_lines(
        _render(1024),
        """
        if ((ulong)tb_npid0 * (ulong)tb_npid1 * (ulong)tb_npid2 >= 8192ul) {
        for (uint c0 = 0u; c0 < 64u; ++c0) {
        __builtin_nontemporal_store(*((const float16 *)(nt0)), (__global float16 *)p0);
        __builtin_ia32_sfence();
        } else {
        for (uint r0 = 0u; r0 < 1024u; ++r0) {
        *((a_y0 + ((int)i0))) = (
        """,
    )


@pytest.mark.parametrize(
    ("n", "features", "local_size"),
    [
        (4096, FEATURES, 1),  # a device without the builtins
        (4096, X86, 128),  # work-items share the row (a GPU's model): not this path
    ],
)
def test_ordinary_stores_elsewhere(n, features, local_size):
    src = _render(n, features=features, local_size=local_size)
    assert "__builtin_nontemporal_store" not in src and "sfence" not in src
    assert ("tune=x86-64" in src) == (X86_TUNE_WIDE in features)


@triton.jit
def _scaled_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * stride + offs, x * 2.0 + 1.0, mask=m)


@pytest.fixture
def x86_ocl(ocl):
    from triton.runtime import driver

    feats = driver.active.descriptor().features
    if X86_NONTEMPORAL_STORE not in feats:
        pytest.skip("the OpenCL device is not PoCL's x86 CPU device: no clang non-temporal stores to test")


@pytest.mark.parametrize(("n_cols", "shift"), [(4096, 0), (4000, 0), (4096, 1)])
def test_rows_stream_on_the_device_and_match_torch(x86_ocl, n_cols, shift):
    """Full rows, a masked tail (the last run of each row takes the element path) and rows one float off the
    64-byte alignment (every run takes the element path); other bytes of the output stay untouched."""
    gen = torch.Generator().manual_seed(n_cols + shift)
    rows = 19
    x = torch.randn(rows * 4096, generator=gen)
    buf = torch.full((rows * 4096 + 16,), -7.0)
    y = buf[shift : shift + rows * 4096]
    k = _scaled_rows[(rows,)](x, y, n_cols, 4096, BLOCK=4096)
    assert "__builtin_nontemporal_store" in k.asm["cl"]
    want = buf.clone()
    want[shift : shift + rows * 4096].view(rows, 4096)[:, :n_cols] = x.view(rows, 4096)[:, :n_cols] * 2.0 + 1.0
    torch.testing.assert_close(buf, want)


@pytest.mark.parametrize("rows", [8, 8201])
def test_small_rows_match_torch_on_both_sides_of_the_launch_threshold(x86_ocl, rows):
    """4 KiB rows (1008 of 1024 elements under the mask): a launch of 8 programs takes the ordinary store, one of
    8201 (past 8192 × 4 KiB = LAUNCH_STREAM_BYTES) the non-temporal one; both equal torch, the padding untouched."""
    gen = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 1024, generator=gen)
    y = torch.full((rows, 1024), -7.0)
    k = _scaled_rows[(rows,)](x, y, 1008, 1024, BLOCK=1024)
    assert "__builtin_nontemporal_store" in k.asm["cl"] and ">= 8192ul" in k.asm["cl"]
    want = torch.full((rows, 1024), -7.0)
    want[:, :1008] = x[:, :1008] * 2.0 + 1.0
    torch.testing.assert_close(y, want)


def test_softmax_streams_and_matches_torch(x86_ocl):
    x = torch.randn(33, 4096, generator=torch.Generator().manual_seed(5))
    y = torch.empty_like(x)
    k = softmax_kernel[(33,)](y, x, x.stride(0), y.stride(0), 4096, BLOCK=4096)
    assert "__builtin_nontemporal_store" in k.asm["cl"] and "tune=x86-64" in k.asm["cl"]
    torch.testing.assert_close(y, torch.softmax(x, 1), atol=1e-6, rtol=1e-5)


@triton.jit
def _scaled_blocks(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * stride + rn[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0 - 1.0, mask=m)


@pytest.mark.parametrize(("M", "N"), [(64, 256), (50, 230)])
def test_2d_blocks_stream_by_rows_and_match_torch(x86_ocl, M, N):
    """A 32x128 block (16 KiB) per program: runs of 16 lie within one row of the block; ragged edges on both axes."""
    x = torch.randn(M, N, generator=torch.Generator().manual_seed(M * N))
    y = torch.full_like(x, -5.0)
    k = _scaled_blocks[(triton.cdiv(M, 32), triton.cdiv(N, 128))](x, y, M, N, x.stride(0), BM=32, BN=128)
    assert "__builtin_nontemporal_store" in k.asm["cl"]
    torch.testing.assert_close(y, x * 3.0 - 1.0)


class _Dev:
    def __init__(self, width: int) -> None:
        self.preferred_vector_width_float = width


@pytest.mark.parametrize(
    ("machine", "cpu", "pocl", "width", "want"),
    [
        ("x86_64", True, True, 16, {X86_NONTEMPORAL_STORE, X86_TUNE_WIDE}),
        ("x86_64", True, True, 8, {X86_NONTEMPORAL_STORE}),  # AVX2: its tuning already uses the whole width
        ("aarch64", True, True, 4, set()),  # no sfence, no x86 tuning
        ("x86_64", False, True, 16, set()),  # PoCL's GPU devices compile for the GPU
        ("x86_64", True, False, 16, set()),  # another vendor's CPU compiler: its builtins are not known
    ],
)
def test_x86_features_only_on_pocls_x86_cpu_device(monkeypatch, machine, cpu, pocl, width, want):
    from triton_backend_sdk.backends.opencl import x86_features as X

    monkeypatch.setattr(X.platform, "machine", lambda: machine)
    assert X.x86_features(_Dev(width), cpu, pocl) == want
