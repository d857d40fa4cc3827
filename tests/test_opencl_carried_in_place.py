"""Loop-carried tiles updated in place (render/control.py `assign_all`): a carried value computed elementwise from
itself and uniform operands (tutorial 03's `a_ptrs += BK * stride`) is written straight back into its array, with
no temporary tile and no copy back per iteration; anything else keeps the parallel-assignment temporaries. Golden
OpenCL C, and on the device results that match torch where carried values read each other."""

from __future__ import annotations

import re

import torch
import triton
import triton.language as tl
from test_opencl_render import render

POINTER_LOOP = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %p0 = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %p1 = tt.addptr %p0, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %z = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %step = tt.splat %n : i32 -> tensor<64xi32>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%p = %p1, %acc = %z) -> (tensor<64x!tt.ptr<f32>>, tensor<64xf32>) : i32 {
      %v = tt.load %p : tensor<64x!tt.ptr<f32>>
      %a = arith.addf %acc, %v : tensor<64xf32>
      %q = tt.addptr %p, %step : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
      scf.yield %q, %a : tensor<64x!tt.ptr<f32>>, tensor<64xf32>
    }
    tt.store %p1, %res#1 : tensor<64x!tt.ptr<f32>>
"""


def _loop_body(src: str) -> str:
    return src.split("for (int iv_k0")[1]


def test_pointer_tile_advanced_in_place():
    body = _loop_body(render(POINTER_LOOP, local_size=1))
    assert "t_res0[r3] = (t_res0[i3] + a_n0);" in body
    assert "__global float * t" not in body  # no temporary pointer tile inside the loop
    assert not re.search(r"t_res0\[q\d+\] = ", body)  # no copy back


def test_swapped_tiles_keep_temporaries():
    """`p, q = q, p`: each new value reads the other target, so they go through temporaries."""
    swap = (
        POINTER_LOOP.replace(
            "iter_args(%p = %p1, %acc = %z) -> (tensor<64x!tt.ptr<f32>>, tensor<64xf32>)",
            "iter_args(%p = %p1, %acc = %z, %p2 = %p1) -> (tensor<64x!tt.ptr<f32>>, tensor<64xf32>, "
            "tensor<64x!tt.ptr<f32>>)",
        )
        .replace(
            "scf.yield %q, %a : tensor<64x!tt.ptr<f32>>, tensor<64xf32>",
            "%q2 = tt.addptr %p2, %step : tensor<64x!tt.ptr<f32>>, tensor<64xi32>\n"
            "      scf.yield %q2, %a, %q : tensor<64x!tt.ptr<f32>>, tensor<64xf32>, tensor<64x!tt.ptr<f32>>",
        )
        .replace("%res:2", "%res:3")
    )
    body = _loop_body(render(swap, local_size=1))
    assert "__global float * t" in body  # a temporary holds the new values before the targets change


@triton.jit
def _walk(x_ptr, out_ptr, n_steps, stride, BLOCK: tl.constexpr):
    """Two pointer tiles advanced in place and a third reading them: sums of rows k and 2k of x."""
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    q = x_ptr + offs
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(n_steps):
        acc += tl.load(p) + 2 * tl.load(q)
        p += stride
        q += 2 * stride
    tl.store(out_ptr + offs, acc)


def test_pointer_walks_match_torch(ocl):
    BLOCK, steps = 64, 5
    x = torch.randn(2 * steps, BLOCK, generator=torch.Generator().manual_seed(3))
    out = torch.empty(BLOCK)
    _walk[(1,)](x, out, steps, x.stride(0), BLOCK=BLOCK)
    want = x[:steps].double().sum(0) + 2 * x[0 : 2 * steps : 2].double().sum(0)
    torch.testing.assert_close(out, want.float(), rtol=1e-5, atol=1e-5)


@triton.jit
def _wrapped_rows(x_ptr, out_ptr, M, n_cols, stride, BM: tl.constexpr, BK: tl.constexpr):
    """Row sums of x over wrapped row indices (`% M`, a run-time divisor, as tutorial 03's `offs_am`), the pointer
    tile advanced by BK columns per step under a ragged column mask."""
    rows = (tl.program_id(0) * BM + tl.arange(0, BM)) % M
    cols = tl.arange(0, BK)
    p = x_ptr + rows[:, None] * stride + cols[None, :]
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for k in range(tl.cdiv(n_cols, BK)):
        acc += tl.load(p, mask=cols[None, :] < n_cols - k * BK, other=0.0)
        p += BK
    out = tl.program_id(0) * BM + tl.arange(0, BM)
    tl.store(out_ptr + out, tl.sum(acc, axis=1), mask=out < 2 * M)


def test_compiled_pointer_walk_carries_a_scalar_offset(ocl):
    """Compiled through Triton: the carried pointer tile becomes a scalar offset (CarriedPointerOffsets), the tile is
    built once before the loop with its `% M` (a division is stored, not recomputed in the loop: DIVISION_COST),
    and on one work-item each row is read from its first pointer plus the offset. Rows wrap past M; results match
    torch at 1 and 128 work-items."""
    M, n_cols, BM, BK = 37, 83, 16, 32
    x = torch.randn(M, 96, generator=torch.Generator().manual_seed(5))
    want = x[:, :n_cols].double().sum(1)
    want = torch.cat([want, want])[: 2 * M].float()
    for work_items in (1, 128):
        out = torch.full((2 * M + BM,), float("nan"))
        k = _wrapped_rows[(triton.cdiv(2 * M, BM),)](
            x, out, M, n_cols, x.stride(0), BM=BM, BK=BK, work_items=work_items
        )
        torch.testing.assert_close(out[: 2 * M], want, rtol=1e-5, atol=1e-5)
        assert out[2 * M :].isnan().all()
        src = k.asm["cl"]
        body = src.split("for (int iv_")[1]
        assert " % " not in body  # the wrapped rows are computed once, before the loop
        tiles = re.findall(r"__global float \* (t_\w+)\[", src)
        # pointer tiles: built before the loop, only read in it
        assert tiles and not any(re.search(rf"{t}\[[^\]]*\] = ", body) for t in tiles)
        if work_items == 1:
            assert re.search(r"= \(t_\w+\[\(q\d+ \* 32u\)\] \+ v_\w+\);", body)  # a run per row, from its first pointer
