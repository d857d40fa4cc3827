"""The loop-carried `tl.dot` accumulator in the blocked register layout (render/dot_blocked.py): golden OpenCL C at
128 work-items (one staging copy and two barriers per k step; two copies and one barrier with double_buffer), and on the device (PoCL at 128
work-items) results bit-identical to the one-work-item path and close to float64 torch, with masked ragged edges, a
loaded initial accumulator, a loop result read by more than a store, and loop bodies where reductions and a second
dot use the scratch area beside the double buffer.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import FEATURES, render
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.backends.opencl.render.dot_blocked import BlockedLayout, plan, staged_bytes
from triton_backend_sdk.ir import parse_ttir

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
    of A (rows padded to 36 floats) and 4 of B for 128 fmas; into the layout before the loop, out of it after. The
    staging area (option double_buffer) has two copies of 4352 floats (A 64 x 36, then B 32 x 64), copy db0 this
    iteration: one barrier between the writes and the reads, none before the writes; a barrier before and after the
    loop."""
    src = _render_module(LOOP, double_buffer=True).source
    check_lines(
        src,
        """
        float t_r0[32];
        for (uint bi0 = 0u; bi0 < 8u; ++bi0) {
        for (uint bj0 = 0u; bj0 < 4u; ++bj0) {
        t_r0[bi0 * 4u + bj0] = 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint db0 = 0u;
        for (int iv_k0 = 0; iv_k0 < 2; iv_k0 += 1) {
        tb_smem->tb_float[db0 * 4352u + ((i0 >> 5) * 36u + (i0 & 31u))] = v_va0;
        tb_smem->tb_float[2304u + db0 * 4352u + i1] = v_vb0;
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint rg0 = (lid >> 4), c0_0 = ((lid & 15u) << 2);
        for (uint k0 = 0u; k0 < 32u; k0 += 4u) {
        const float4 ak0 = *((const __local float4 *)(&tb_smem->tb_float[db0 * 4352u + ((0u + rg0) * 36u + k0)]));
        const float4 ak7 = *((const __local float4 *)(&tb_smem->tb_float[db0 * 4352u + ((56u + rg0) * 36u + k0)]));
        const float4 bk0 = *((const __local float4 *)(&tb_smem->tb_float[2304u + db0 * 4352u + ((k0 + 0u) * 64u + c0_0 + 0u)]));
        t_r0[0] = fma(ak0.s0, bk0.s0, t_r0[0]);
        t_r0[31] = fma(ak7.s0, bk0.s3, t_r0[31]);
        const float4 bk3 = *((const __local float4 *)(&tb_smem->tb_float[2304u + db0 * 4352u + ((k0 + 3u) * 64u + c0_0 + 0u)]));
        t_r0[31] = fma(ak7.s3, bk3.s3, t_r0[31]);
        db0 ^= 1u;
        barrier(CLK_LOCAL_MEM_FENCE);
        tb_smem->tb_float[(((bi1 * 8u + (lid >> 4)) << 6) + (((lid & 15u) << 2) + bj1))] = t_r0[bi1 * 4u + bj1];
        t_r1[r2] = tb_smem->tb_float[i2];
        """,
    )
    assert _loop_text(src).count("barrier(") == 1
    assert f"tb_float[{2 * sum(staged_bytes(64, 64, 32)) // 4}]" in src  # both copies in the scratch area


def _loop_text(src: str) -> str:
    """The k loop's body (from its `for` to the parity flip)."""
    return src[src.index("for (int iv_k0") : src.index("db0 ^= 1u;")]


def _render_module(body: str, **kw):
    module = parse_ttir(
        f"module {{\n  tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {{\n{body}\n    tt.return\n  }}\n}}"
    )
    return render_module(module, "k", OPENCL_RULES, OPENCL, 128, FEATURES, "test-device", **kw)


def test_single_buffered_dot_has_two_barriers_a_step():
    """By default (and in the compiler's second try where two copies exceed local memory): one copy at offset 0, a
    barrier before the writes and one after, half the scratch area of two copies."""
    rk = _render_module(LOOP)
    two = _render_module(LOOP, double_buffer=True)
    assert not rk.double_buffered and two.double_buffered
    assert rk.scratch_bytes == sum(staged_bytes(64, 64, 32)) and two.scratch_bytes == 2 * rk.scratch_bytes
    loop = rk.source[rk.source.index("for (int iv_k0") : rk.source.index("for (uint k0")]
    assert loop.count("barrier(") == 2 and "db0" not in rk.source
    assert "tb_smem->tb_float[2304u + i1] = v_vb0;" in loop


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


@triton.jit
def _two_dots_and_sums(
    a_ptr,
    b_ptr,
    c_ptr,
    d_ptr,
    s_ptr,
    M,
    N,
    K,
    PASSES: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """Two blocked accumulators in one loop (a @ b and a @ (2b + 1)) and row sums of a through a reduction in the
    same body: three scratch users each k step beside the double buffers; the k loop runs PASSES times inside an
    outer loop (its buffers' parity restarts each pass)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    cm = (rm[:, None] < M) & (rn[None, :] < N)
    total_c = tl.zeros((BM, BN), dtype=tl.float32)
    total_d = tl.zeros((BM, BN), dtype=tl.float32)
    rows = tl.zeros((BM,), dtype=tl.float32)
    for p in range(PASSES):
        acc_c = tl.zeros((BM, BN), dtype=tl.float32)
        acc_d = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            ka = k * BK + rk
            a = tl.load(a_ptr + rm[:, None] * K + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc_c = tl.dot(a, b, acc_c, input_precision="ieee")
            acc_d = tl.dot(a, b * 2.0 + 1.0, acc_d, input_precision="ieee")
            rows += tl.sum(a, axis=1)
        total_c += acc_c * (p + 1)
        total_d += acc_d
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], total_c, mask=cm)
    tl.store(d_ptr + rm[:, None] * N + rn[None, :], total_d, mask=cm)
    tl.store(s_ptr + pn * M + rm, rows, mask=rm < M)


@pytest.mark.parametrize("tiles", [(64, 64, 32), (32, 64, 16)])
def test_double_buffers_beside_other_scratch_users(ocl, tiles):
    """Bit-identical to one work-item (which stages nothing) and close to float64 torch, ragged everywhere."""
    BM, BN, BK = tiles
    M, N, K, P = BM + 9, 2 * BN - 5, 4 * BK + 3, 2
    g = torch.Generator().manual_seed(BM * BK)
    a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    outs, srcs, kerns = [], [], []
    for work_items, double in ((1, True), (128, True), (128, False)):
        c, d, s = torch.empty(M, N), torch.empty(M, N), torch.empty(grid[1], M)
        kern = _two_dots_and_sums[grid](
            a, b, c, d, s, M, N, K, PASSES=P, BM=BM, BN=BN, BK=BK, work_items=work_items, double_buffer=double
        )
        outs.append((c, d, s))
        srcs.append(kern.asm["cl"])
        kerns.append(kern)
    from triton_backend_sdk.backends.opencl.compiler import OpenCLBackend

    if 4 * sum(staged_bytes(BM, BN, BK)) <= OpenCLBackend.describe(None).shared_memory_bytes:
        assert "db0 ^= 1u;" in srcs[1] and "db1 ^= 1u;" in srcs[1]  # both dots double-buffered at 128 work-items
    else:  # two dots' two copies exceed the device's local memory (NVIDIA's 48 KiB for 64x64x32): one copy each
        assert "db0" not in srcs[1] and kerns[1].metadata.opencl_adapted[-1].startswith("one staging copy per dot")
    assert "db0" not in srcs[2]  # the launch option double_buffer=False: one copy each
    ad, bd = a.double(), b.double()
    torch.testing.assert_close(outs[1][0], (ad @ bd * sum(range(1, P + 1))).float(), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(outs[1][1], (ad @ (bd * 2 + 1) * P).float(), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(outs[1][2], (ad.sum(1) * P).float().expand(grid[1], M), rtol=1e-4, atol=1e-3)
    for one, many, single in zip(outs[0][:2], outs[1][:2], outs[2][:2]):
        assert torch.equal(one, many) and torch.equal(one, single)
