"""`tl.dot` on a multi-work-item group without a loop-carried accumulator: an output held in runs of 4 computes in
dot_blocked's blocks, a narrower one with A staged transposed and row-permuted (render/dot.py `_row_runs`) so each
work-item reads its rows of A for one k as float4 vectors. Golden OpenCL C, and on the device (PoCL at 128
work-items) results bit-identical to the one-work-item path (same fmas, same order).
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import render


def _dot_ttir(m: int, n: int, k: int) -> str:
    """An m x k by k x n fp32 dot of two loads (of one address each: scalar reads), stored."""
    return f"""
    %a = tt.splat %x : !tt.ptr<f32> -> tensor<{m}x{k}x!tt.ptr<f32>>
    %va = tt.load %a : tensor<{m}x{k}x!tt.ptr<f32>>
    %b = tt.splat %x : !tt.ptr<f32> -> tensor<{k}x{n}x!tt.ptr<f32>>
    %vb = tt.load %b : tensor<{k}x{n}x!tt.ptr<f32>>
    %c = arith.constant dense<0.000000e+00> : tensor<{m}x{n}xf32>
    %d = tt.dot %va, %vb, %c, inputPrecision = ieee : tensor<{m}x{k}xf32> * tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
    %o = tt.splat %x : !tt.ptr<f32> -> tensor<{m}x{n}x!tt.ptr<f32>>
    tt.store %o, %d : tensor<{m}x{n}x!tt.ptr<f32>>
"""


DOT = _dot_ttir(64, 64, 32)


def test_an_output_held_in_runs_of_four_computes_in_blocks():
    """128 work-items, 64x64 output: the canonical layout holds it in runs of 4 along its rows (context.VEC), which
    is dot_blocked's 8x4 block per work-item (rows 8i + lid/16, columns 4(lid % 16) + j, slot 4i + j): A is staged
    row-major with rows padded to 36, and per 4 k steps a work-item reads 8 float4s of A and one float4 of B per k
    for 128 fmas, straight into the output's own slots."""
    src = render(DOT, local_size=128)
    check_lines(
        src,
        """
        const uint i1 = (((r1 >> 2u) * 128u + lid) << 2u) + (r1 & 3u);
        tb_smem->tb_float[(i1 >> 5) * 36u + (i1 & 31u)] = v_va0;
        tb_smem->tb_float[2304u + i2] = v_vb0;
        const uint rg0 = (lid >> 4), c0_0 = ((lid & 15u) << 2);
        for (uint k0 = 0u; k0 < 32u; k0 += 4u) {
        const float4 ak0 = *((const __local float4 *)(&tb_smem->tb_float[(0u + rg0) * 36u + k0]));
        const float4 ak7 = *((const __local float4 *)(&tb_smem->tb_float[(56u + rg0) * 36u + k0]));
        const float4 bk0 = *((const __local float4 *)(&tb_smem->tb_float[2304u + ((k0 + 0u) * 64u + c0_0 + 0u)]));
        t_d0[0] = fma(ak0.s0, bk0.s0, t_d0[0]);
        t_d0[31] = fma(ak7.s0, bk0.s3, t_d0[31]);
        """,
    )


NARROW = _dot_ttir(256, 2, 16)


def test_a_rows_of_a_work_item_are_float4_reads():
    """128 work-items, a 256x2 output (rows too narrow for runs of 4): work-item lid holds column lid % 2, rows
    64r + lid / 2 (r < 4). A[m][k] is staged at k*260 + (m % 64)*4 + m / 64, so its 4 rows for one k are one float4;
    B's element once per k. (The operands here are loads of one address, so each is one scalar read.)"""
    src = render(NARROW, local_size=128)
    check_lines(
        src,
        """
        for (uint k0 = 0u; k0 < 16u; ++k0) {
        const float bk0 = tb_smem->tb_float[
        const float4 ak0 = *((const __local float4 *)(&tb_smem->tb_float[k0 * 260u + ((lid >> 1) << 2) + 0u]));
        t_d0[0] = fma(ak0.s0, bk0, t_d0[0]);
        t_d0[3] = fma(ak0.s3, bk0, t_d0[3]);
        """,
    )


def test_plain_staging_where_a_work_item_holds_fewer_than_four_rows():
    """2048 work-items on a 64x64 output hold 2 rows each, fewer than a float4: A is staged row-major as before."""
    src = render(DOT, local_size=2048)
    assert "float4" not in src.split("for (uint k0")[1]


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(2):
        a = tl.load(a_ptr + rm[:, None] * (2 * BK) + k * BK + rk[None, :])
        b = tl.load(b_ptr + (k * BK + rk[:, None]) * BN + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("shape", [(64, 64, 32), (32, 128, 16), (128, 32, 32)])
def test_dot_by_row_runs_matches_one_work_item_bit_for_bit(ocl, shape):
    BM, BN, BK = shape
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(BM, 2 * BK, generator=g), torch.randn(2 * BK, BN, generator=g)
    outs = []
    for work_items in (1, 128):
        c = torch.empty(BM, BN)
        _mm[(1,)](a, b, c, BM=BM, BN=BN, BK=BK, work_items=work_items)
        outs.append(c)
    torch.testing.assert_close(outs[1], (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)
    assert torch.equal(outs[0], outs[1])


@triton.jit
def _mm_once(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.load(c_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, c, input_precision="ieee") * 2.0)


@pytest.mark.parametrize("shape", [(64, 64, 32), (32, 128, 16), (16, 64, 64), (256, 2, 16), (16, 1024, 16)])
def test_unrolled_dot_matches_one_work_item_bit_for_bit(ocl, shape):
    """A dot outside any loop, its accumulator loaded: blocks (runs of 4), row runs (256x2) and the plain path
    (rows wider than 4 x 128) at 128 work-items give the one-work-item path's bits. A GPU may refuse the one
    work-item launch of the largest tile (NVIDIA: 64 KiB of private memory, OUT_OF_HOST_MEMORY, raised as a named
    DeviceError): there the 128-work-item result is checked against float64 alone."""
    from triton_backend_sdk.backends.opencl.compiler import CPU_FEATURE
    from triton_backend_sdk.backends.opencl.runtime import DeviceError

    BM, BN, BK = shape
    g = torch.Generator().manual_seed(BM + BN)
    a, b, c0 = torch.randn(BM, BK, generator=g), torch.randn(BK, BN, generator=g), torch.randn(BM, BN, generator=g)
    outs = []
    for work_items in (1, 128):
        c = c0.clone()
        try:
            _mm_once[(1,)](a, b, c, BM=BM, BN=BN, BK=BK, work_items=work_items)
        except DeviceError as e:
            cpu = CPU_FEATURE in triton.runtime.driver.active.descriptor().features
            if cpu or work_items != 1 or BM * BN * 4 < 64 * 1024 or "refused to launch" not in str(e):
                raise
            c = None
        outs.append(c)
    torch.testing.assert_close(outs[1], ((a.double() @ b.double() + c0.double()) * 2).float(), rtol=1e-4, atol=1e-4)
    assert outs[0] is None or torch.equal(outs[0], outs[1])
