"""The loop-carried `tl.dot` accumulator in the blocked register layout (render/dot_blocked.py): golden OpenCL C at
128 work-items, and on the device (PoCL at 128 work-items) results bit-identical to the one-work-item path and close
to float64 torch, with masked ragged edges, a loaded initial accumulator and a loop result read by more than a store.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import render
from triton_backend_sdk.backends.opencl.render.dot_blocked import BlockedLayout, plan

LOOP = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) : i32 {
      %a = tt.splat %x : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>>
      %va = tt.load %a : tensor<64x32x!tt.ptr<f32>>
      %b = tt.splat %x : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
      %vb = tt.load %b : tensor<32x64x!tt.ptr<f32>>
      %d = tt.dot %va, %vb, %acc, inputPrecision = ieee : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %o = tt.splat %x : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    tt.store %o, %r : tensor<64x64x!tt.ptr<f32>>
"""


def test_plan_blocks_per_work_item():
    assert plan(64, 64, 32, 128) == BlockedLayout(64, 64, 8, 4)
    assert plan(128, 64, 32, 128) == BlockedLayout(128, 64, 8, 8)
    assert plan(128, 128, 32, 128) is None  # 128 accumulators a work-item: the canonical path
    assert plan(64, 64, 32, 1) is None
    assert plan(8, 8, 16, 128) is None  # fewer than 4 elements a work-item


def test_loop_carried_accumulator_is_blocked():
    """Work-item lid holds rows 8i + lid/16 (i < 8) x columns 4*(lid%16) + j (j < 4): per 4 k steps 8 float4 reads
    of A (rows padded to 36 floats) and 4 of B for 128 fmas; into the layout before the loop, out of it after."""
    src = render(LOOP, local_size=128)
    check_lines(
        src,
        """
        float t_r0[32];
        for (uint bi0 = 0u; bi0 < 8u; ++bi0) {
        for (uint bj0 = 0u; bj0 < 4u; ++bj0) {
        t_r0[bi0 * 4u + bj0] = 0.0f;
        for (int iv_k0 = 0; iv_k0 < 2; iv_k0 += 1) {
        tb_smem->tb_float[(i0 >> 5) * 36u + (i0 & 31u)] = v_va0;
        const uint rg0 = (lid >> 4), c0_0 = ((lid & 15u) << 2);
        for (uint k0 = 0u; k0 < 32u; k0 += 4u) {
        const float4 ak0 = *((const __local float4 *)(&tb_smem->tb_float[(0u + rg0) * 36u + k0]));
        const float4 ak7 = *((const __local float4 *)(&tb_smem->tb_float[(56u + rg0) * 36u + k0]));
        const float4 bk0 = *((const __local float4 *)(&tb_smem->tb_float[2304u + ((k0 + 0u) * 64u + c0_0 + 0u)]));
        t_r0[0] = fma(ak0.s0, bk0.s0, t_r0[0]);
        t_r0[31] = fma(ak7.s0, bk0.s3, t_r0[31]);
        const float4 bk3 = *((const __local float4 *)(&tb_smem->tb_float[2304u + ((k0 + 3u) * 64u + c0_0 + 0u)]));
        t_r0[31] = fma(ak7.s3, bk3.s3, t_r0[31]);
        tb_smem->tb_float[(((bi1 * 8u + (lid >> 4)) << 6) + (((lid & 15u) << 2) + bj1))] = t_r0[bi1 * 4u + bj1];
        t_r1[r2] = tb_smem->tb_float[i2];
        """,
    )


def test_accumulator_read_twice_stays_canonical():
    """`acc` read by the dot and by an add: the dot may not accumulate in place, so no blocked layout."""
    src = render(
        LOOP.replace(
            "scf.yield %d : tensor<64x64xf32>",
            "%e = arith.addf %d, %acc : tensor<64x64xf32>\n      scf.yield %e : tensor<64x64xf32>",
        ),
        local_size=128,
    )
    assert "bi0" not in src and "float4 ak0" in src


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, LOAD_C: tl.constexpr):
    """Tutorial 03's loop with masked edges; LOAD_C: the accumulator starts from C, and the result is scaled."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    cm = (rm[:, None] < M) & (rn[None, :] < N)
    if LOAD_C:
        acc = tl.load(c_ptr + rm[:, None] * N + rn[None, :], mask=cm, other=0.0)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        ka = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    if LOAD_C:
        acc = acc * 0.5
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=cm)


@pytest.mark.parametrize("load_c", [False, True])
@pytest.mark.parametrize("tiles", [(64, 64, 32), (32, 128, 16), (128, 64, 16), (16, 64, 32)])
def test_blocked_dot_matches_one_work_item_bit_for_bit(ocl, tiles, load_c):
    BM, BN, BK = tiles
    M, N, K = 2 * BM - 3, BN + 5, 3 * BK + 7  # ragged: every edge masked
    g = torch.Generator().manual_seed(BM + BN + BK + load_c)
    a, b, c0 = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g), torch.randn(M, N, generator=g)
    outs = []
    for work_items in (1, 128):
        c = c0.clone()
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        _matmul[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, LOAD_C=load_c, work_items=work_items)
        outs.append(c)
    want = a.double() @ b.double()
    if load_c:
        want = (want + c0.double()) * 0.5
    torch.testing.assert_close(outs[1], want.float(), rtol=1e-4, atol=1e-4)
    assert torch.equal(outs[0], outs[1])
