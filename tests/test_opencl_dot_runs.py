"""`tl.dot` on a multi-work-item group with A staged transposed and row-permuted (render/dot.py `_row_runs`): each
work-item reads its rows of A for one k as float4 vectors instead of one local load per product. Golden OpenCL C,
and on the device (PoCL at 128 work-items) results bit-identical to the one-work-item path (same fmas, same order).
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import render

DOT = """
    %a = tt.splat %x : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
    %va = tt.load %a : tensor<64x32x!tt.ptr<f32>>
    %b = tt.splat %x : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
    %vb = tt.load %b : tensor<32x64x!tt.ptr<f32>>
    %c = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %d = tt.dot %va, %vb, %c, inputPrecision = ieee : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
    %o = tt.splat %x : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    tt.store %o, %d : tensor<64x64x!tt.ptr<f32>>
"""


def test_a_rows_of_a_work_item_are_float4_reads():
    """128 work-items, 64x64 output: work-item lid holds column lid % 64, rows 2r + lid / 64 (r < 32). A[m][k] is
    staged at k*68 + (m % 2)*32 + m / 2, so rows 2r + h for r = 4c..4c+3 are one float4; B's element once per k.
    (The operands here are loads of one address, so each is one scalar read, staged as it is.)"""
    src = render(DOT, local_size=128)
    check_lines(
        src,
        """
        union tb_scratch { float tb_float[4224]; };
        tb_smem->tb_float[((i0 & 31u)) * 68u + ((((i0 >> 5)) & 1u) << 5) + (((i0 >> 5)) >> 1)] = v_va0;
        tb_smem->tb_float[2176u + i1] = v_vb0;
        for (uint k0 = 0u; k0 < 32u; ++k0) {
        const float bk0 = tb_smem->tb_float[2176u + ((k0 << 6) + (lid & 63u))];
        const float4 ak0 = *((const __local float4 *)(&tb_smem->tb_float[k0 * 68u + ((lid >> 6) << 5) + 0u]));
        t_d0[0] = fma(ak0.s0, bk0, t_d0[0]);
        t_d0[3] = fma(ak0.s3, bk0, t_d0[3]);
        const float4 ak7 = *((const __local float4 *)(&tb_smem->tb_float[k0 * 68u + ((lid >> 6) << 5) + 28u]));
        t_d0[31] = fma(ak7.s3, bk0, t_d0[31]);
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
