"""Loads of a loop's dot operands issued one iteration ahead (sdk/transforms/prefetch_dot_operands.py): golden IR of
the pass, the loops it leaves alone (a store or a volatile load in the body, a load read by more than dots, an
address or a carried step that needs a load), and on opencl at 128 work-items (where the backend runs it) matmul loops with
ragged masked edges, zero, one and many iterations, a start and step other than 0 and 1, and an unsigned loop,
bit-identical with the pass off and close to float64 torch."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.transforms.prefetch_dot_operands import PrefetchDotOperands

_LOOP = """module {{
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %c: !tt.ptr<f32>, %n: i32) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %zo = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %r = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
    %pa = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %pb = tt.splat %b : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %o = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %res:3 = scf.for {unsigned}%k = %c0 to %n step %c1 iter_args(%acc = %z, %qa = %pa, %qb = %pb) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>, tensor<16x16x!tt.ptr<f32>>) : i32 {{
      %ks = tt.splat %k : i32 -> tensor<16xi32>
      %m1 = arith.cmpi slt, %r, %ks : tensor<16xi32>
      %m2 = tt.expand_dims %m1 {{axis = 0 : i32}} : tensor<16xi1> -> tensor<1x16xi1>
      %m = tt.broadcast %m2 : tensor<1x16xi1> -> tensor<16x16xi1>
      %va = tt.load %qa, %m, %zo {volatile_a}: tensor<16x16x!tt.ptr<f32>>
      %vb = tt.load %qb : tensor<16x16x!tt.ptr<f32>>
      %d = tt.dot %va, %vb, %acc : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
      {extra}
      %s = tt.splat %c32 : i32 -> tensor<16x16xi32>
      %na = tt.addptr %qa, %s : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
      scf.yield %d, %na, %qb : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>, tensor<16x16x!tt.ptr<f32>>
    }}
    tt.store %o, %res#0 : tensor<16x16x!tt.ptr<f32>>
    tt.return
  }}
}}"""


def _run(unsigned: str = "", volatile_a: str = "", extra: str = "") -> str:
    module = parse_ttir(_LOOP.format(unsigned=unsigned, volatile_a=volatile_a, extra=extra))
    PrefetchDotOperands().run(module, None)
    verify(module)
    return print_module(module)


def test_pass_golden():
    """Before the loop: 0 < n, A's address and mask at k = 0 and B's, both masked by it; the loop carries both tiles.
    In the body: the next pointer (moved up from before the yield), k + 1 and k + 1 < n once, A's mask at k + 1
    and both next tiles loaded before the dot, which reads the carried ones; this iteration's mask ops are gone."""
    text = _run()
    check_lines(
        text,
        """
        %0 = arith.cmpi slt, %c0, %n : i32
        %ks = tt.splat %c0 : i32 -> tensor<16xi32>
        %m1 = arith.cmpi slt, %r, %ks : tensor<16xi32>
        %m = tt.broadcast %m2 : tensor<1x16xi1> -> tensor<16x16xi1>
        %1 = tt.splat %0 : i1 -> tensor<16x16xi1>
        %2 = arith.andi %m, %1 : tensor<16x16xi1>
        %3 = tt.load %pa, %2, %zo : tensor<16x16x!tt.ptr<f32>>
        %4 = tt.splat %0 : i1 -> tensor<16x16xi1>
        %5 = tt.load %pb, %4 : tensor<16x16x!tt.ptr<f32>>
        iter_args(%acc = %z, %qa = %pa, %qb = %pb, %va = %3, %vb = %5)
        %s = tt.splat %c32 : i32 -> tensor<16x16xi32>
        %na = tt.addptr %qa, %s : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
        %8 = arith.addi %k, %c1 : i32
        %9 = arith.cmpi slt, %8, %n : i32
        %ks_0 = tt.splat %8 : i32 -> tensor<16xi32>
        %11 = arith.andi %m_0, %10 : tensor<16x16xi1>
        %12 = tt.load %na, %11, %zo : tensor<16x16x!tt.ptr<f32>>
        %13 = tt.splat %9 : i1 -> tensor<16x16xi1>
        %14 = tt.load %qb, %13 : tensor<16x16x!tt.ptr<f32>>
        %d = tt.dot %va, %vb, %acc : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        scf.yield %d, %na, %qb, %12, %14 :
        tt.store %o, %res : tensor<16x16x!tt.ptr<f32>>
        """,
    )
    body = text.split("scf.for")[1]
    assert body.count("tt.load") == 2 and body.count("arith.addi") == 1 and "%ks = " not in body


def test_unsigned_loop_checks_the_bound_unsigned():
    text = _run(unsigned="unsigned ")
    assert "arith.cmpi ult, %c0, %n : i32" in text and "arith.cmpi ult, %8, %n : i32" in text


@pytest.mark.parametrize(
    "case",
    [
        {"extra": "tt.store %o, %d : tensor<16x16x!tt.ptr<f32>>"},  # a store: an early load could read around it
        {"extra": "%e = arith.addf %va, %vb : tensor<16x16xf32>"},  # A read by more than the dot
        {"volatile_a": "{isVolatile = true} "},  # its order with every other access is the point: none moves
    ],
    ids=["store-in-body", "load-read-by-add", "volatile"],
)
def test_loops_left_alone(case):
    text = _run(**case)
    assert "iter_args(%acc = %z, %qa = %pa, %qb = %pb) ->" in text and "%k, %c1" not in text


def test_an_address_or_step_that_needs_a_load_is_left_alone():
    """A's address loaded from memory in the body (a gather through an index tile), and B's pointer advanced by an
    amount loaded in the body: neither can be computed an iteration early."""
    module = parse_ttir(
        """module {
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %ix: !tt.ptr<i32>, %c: !tt.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
    %pa = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %pb = tt.splat %b : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %pi = tt.splat %ix : !tt.ptr<i32> -> tensor<16x16x!tt.ptr<i32>>
    %res:2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z, %qb = %pb) -> (tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>) : i32 {
      %i = tt.load %pi : tensor<16x16x!tt.ptr<i32>>
      %qa = tt.addptr %pa, %i : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
      %va = tt.load %qa : tensor<16x16x!tt.ptr<f32>>
      %vb = tt.load %qb : tensor<16x16x!tt.ptr<f32>>
      %d = tt.dot %va, %vb, %acc : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
      %na = tt.addptr %qb, %i : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
      scf.yield %d, %na : tensor<16x16xf32>, tensor<16x16x!tt.ptr<f32>>
    }
    %o = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    tt.store %o, %res#0 : tensor<16x16x!tt.ptr<f32>>
    tt.return
  }
}"""
    )
    before = print_module(module)
    PrefetchDotOperands().run(module, None)
    assert print_module(module) == before


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, START, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop over k in [START, K) by BK: A's pointers carried and advanced, B's computed from k."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + (START + rk)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(START, K, BK):
        ka = k0 + rk
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ka[:, None] * N + rn[None, :], mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize(
    "shape",
    [(70, 45, 83, 0), (64, 64, 32, 0), (33, 20, 5, 0), (50, 40, 0, 0), (40, 72, 100, 7)],
    ids=["ragged", "one-step", "short-k", "no-steps", "start-7"],
)
def test_prefetched_matmul_on_the_gpu_model(ocl, shape):
    M, N, K, start = shape
    g = torch.Generator().manual_seed(M * N + K)
    a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    outs, srcs = [], []
    for prefetch in (True, False):
        c = torch.full((M, N), float("nan"))
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        kern = _matmul[grid](a, b, c, M, N, K, start, BM=32, BN=32, BK=16, work_items=128, prefetch=prefetch)
        outs.append(c)
        srcs.append(kern.asm["cl"])
    loop = srcs[0].split("for (int iv_")[1]
    assert "+ (uint)16));" in loop.split("barrier(")[0]  # k0 + BK computed before the dot's first barrier
    assert srcs[0] != srcs[1]
    want = (a[:, start:].double() @ b[start:].double()).float()
    torch.testing.assert_close(outs[0], want, rtol=1e-4, atol=1e-4)
    assert torch.equal(outs[0], outs[1])
