"""int8 `tt.dot` into int32 on every backend, exact against torch on random int8 data with the extremes, masks,
ragged sizes, batched dots, a bias added after the dot and int32 wrap-around. cpu_ref computes it by pairs of k
(codegen/dot_groups.py: x86 group multiply-adds chosen from the descriptor's features, the int32 kernel elsewhere);
opencl at one work-item per program in register blocks of widened int32 vectors (render/dot.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.backends.cpu_ref.codegen import RULES, lower_module
from triton_backend_sdk.backends.cpu_ref.compiler import host_descriptor
from triton_backend_sdk.ir import parse_ttir
from triton_backend_sdk.options import Options

_DOT_I8 = """module {
  tt.func public @k(%x: !tt.ptr<i8>, %y: !tt.ptr<i32>) {
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %e = tt.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %b = tt.broadcast %e : tensor<1x32xi32> -> tensor<32x32xi32>
    %s = tt.splat %x : !tt.ptr<i8> -> tensor<32x32x!tt.ptr<i8>>
    %p = tt.addptr %s, %b : tensor<32x32x!tt.ptr<i8>>, tensor<32x32xi32>
    %v = tt.load %p : tensor<32x32x!tt.ptr<i8>>
    %c = arith.constant dense<0> : tensor<32x32xi32>
    %d = tt.dot %v, %v, %c : tensor<32x32xi8> * tensor<32x32xi8> -> tensor<32x32xi32>
    %o = tt.splat %y : !tt.ptr<i32> -> tensor<32x32x!tt.ptr<i32>>
    %q = tt.addptr %o, %b : tensor<32x32x!tt.ptr<i32>>, tensor<32x32xi32>
    tt.store %q, %d : tensor<32x32x!tt.ptr<i32>>
    tt.return
  }
}"""


def _llir(bits: int, features: tuple[str, ...]) -> str:
    desc = dataclasses.replace(host_descriptor(), vector_width_bits=bits, features=features)
    return str(lower_module(parse_ttir(_DOT_I8), "k", RULES, Options(), desc))


@pytest.mark.parametrize(
    "bits,features,intrinsic,operand",
    [
        (512, ("+avx512bw", "+avx512vnni"), "llvm.x86.avx512.vpdpbusd.512", "<64 x i8>"),
        (512, ("+avx512bw",), "llvm.x86.avx512.pmaddw.d.512", "<32 x i16>"),
        (256, ("+avx2", "+avxvnni"), "llvm.x86.avx2.pmadd.wd", "<16 x i16>"),
    ],
)
def test_the_group_multiply_add_is_chosen_from_the_descriptor(bits, features, intrinsic, operand) -> None:
    lanes = bits // 32
    with_it = _llir(bits, ("+sse2", *features))
    assert f'@"{intrinsic}"(' in with_it and operand in with_it
    assert f"mul <{lanes} x i32>" not in with_it
    without = _llir(bits, ("+neon",))
    assert "llvm.x86" not in without and f"mul <{lanes} x i32>" in without


def test_quads_need_k_a_multiple_of_four_and_pairs_an_even_k() -> None:
    from types import SimpleNamespace

    from triton_backend_sdk.backends.cpu_ref.codegen.context import Tile
    from triton_backend_sdk.backends.cpu_ref.codegen.dot_groups import group_plan
    from triton_backend_sdk.backends.cpu_ref.codegen.types import I8, I32

    ctx = SimpleNamespace(target=SimpleNamespace(features=("+avx512bw", "+avx512vnni")))

    def chosen(k: int):
        got = group_plan(ctx, Tile((16, k), I8), Tile((k, 64), I8), I32, (4, 4, 16))
        return got and got[1].group

    assert (chosen(32), chosen(18), chosen(17)) == (4, 2, None)
    assert group_plan(ctx, Tile((16, 32), I8), Tile((32, 64), I8), I32, None) is None


@triton.jit
def int8_matmul_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BIAS: tl.constexpr
):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    if BIAS:
        acc = tl.load(bias_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0)
    for k in range(tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _int8(shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    x = torch.randint(-128, 128, shape, generator=g, dtype=torch.int16).to(torch.int8)
    x.view(-1)[:3] = torch.tensor([-128, 127, -128], dtype=torch.int8)
    return x


def _wrapped(x: torch.Tensor) -> torch.Tensor:
    """int64 -> int32 modulo 2^32, as int32 accumulation wraps."""
    return ((x + 2**31) % 2**32 - 2**31).to(torch.int32)


@pytest.mark.parametrize(
    "m,n,k,tiles",
    [(64, 64, 64, (32, 32, 32)), (77, 45, 83, (32, 16, 32)), (130, 96, 200, (64, 32, 64)), (16, 80, 16, (16, 64, 16))],
)
def test_int8_matmul_is_exact(backend, rng, m, n, k, tiles):
    a, b = _int8((m, k), rng), _int8((k, n), rng)
    c = torch.empty(m, n, dtype=torch.int32)
    bm, bn, bk = tiles
    h = int8_matmul_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](a, b, c, c, m, n, k, BM=bm, BN=bn, BK=bk, BIAS=0)
    assert torch.equal(c, (a.long() @ b.long()).int())
    features = host_descriptor().features
    if backend == "cpu_ref" and "+avx512bw" in features:
        quads = "+avx512vnni" in features
        assert ("llvm.x86.avx512.vpdpbusd.512" if quads else "llvm.x86.avx512.pmaddw.d.512") in h.asm["llir"]
    if backend == "opencl" and h.metadata.opencl_local_size == 1:
        assert "as_uint" in h.asm["cl"], "the one-work-item register blocks (wrapping int32 adds)"


def test_int8_matmul_on_a_bias_wraps_like_int32(backend, rng):
    """The accumulator starts at a bias near the int32 limits: sums past them wrap as element-wise int32 adds do."""
    m, n, k = 48, 32, 256
    a, b = _int8((m, k), rng), _int8((k, n), rng)
    bias = torch.randint(2**31 - 3_000_000, 2**31 - 1, (m, n), generator=rng, dtype=torch.int64)
    bias[::2] = -bias[::2]
    bias = bias.to(torch.int32)
    c = torch.empty(m, n, dtype=torch.int32)
    int8_matmul_kernel[(triton.cdiv(m, 16), triton.cdiv(n, 32))](a, b, c, bias, m, n, k, BM=16, BN=32, BK=64, BIAS=1)
    want = _wrapped(bias.long() + a.long() @ b.long())
    assert torch.equal(c, want)
    assert not torch.equal(want.long(), bias.long() + a.long() @ b.long()), "the data must actually wrap"


@triton.jit
def batched_int8_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb, rm, rn, rk = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
    c = tl.dot(a, b) + 7
    tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], c)


def test_batched_int8_dot_with_an_add_after_it(backend, rng):
    bsz, m, n, k = 2, 16, 32, 64
    a, b = _int8((bsz, m, k), rng), _int8((bsz, k, n), rng)
    c = torch.empty(bsz, m, n, dtype=torch.int32)
    batched_int8_dot_kernel[(1,)](a, b, c, B=bsz, M=m, N=n, K=k)
    assert torch.equal(c, (torch.bmm(a.long(), b.long()) + 7).int())
