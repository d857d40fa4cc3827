"""cpu_ref keeps tutorial 03's B tiles between the programs of a launcher chunk (`analysis/operand_reuse.py`,
`codegen/operand_cache.py`): which loads qualify, what the entry and the load compile to, and products against torch
where tiles are reused, missed (other column blocks, GROUP_M=1), past the slots, changed between launches."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.analysis.operand_reuse import reusable_dot_operand, scalar_leaves
from triton_backend_sdk.bench.kernels import matmul_kernel
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir


def _launch(kernel, a, b, c, tiles, group_m=8, **options):
    m, k = a.shape
    n = b.shape[1]
    bm, bn, bk = tiles
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    args = (a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())
    return kernel[grid](*args, BM=bm, BN=bn, BK=bk, GROUP_M=group_m, **options)


def _sdkir_loads(compiled) -> tuple[O.Func, list[O.Load]]:
    module = parse_ttir(compiled.asm["sdkir"])
    func = next(op for op in module.ops if isinstance(op, O.Func))
    return func, [op for op in func.walk() if isinstance(op, O.Load)]


@triton.jit
def _variant(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, KIND: tl.constexpr):  # fmt: skip
    """Tutorial 03 (without grouping) with one change by KIND: 1 stores before the loop, 2 counts programs with an
    atomic after it, 3 loads B volatile, 4 also adds B's tile into the output."""
    pid = tl.program_id(0)
    pid_m = pid // tl.cdiv(N, BN)
    pid_n = pid % tl.cdiv(N, BN)
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if KIND == 1:
        tl.store(c_ptrs, tl.zeros((BM, BN), dtype=tl.float32), mask=c_mask)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    extra = tl.zeros((BK, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0, volatile=KIND == 3)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        if KIND == 4:
            extra += b
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    if KIND == 4:
        acc += tl.sum(extra, axis=0)[None, :]
    tl.store(c_ptrs, acc, mask=c_mask)
    if KIND == 2:
        tl.atomic_add(c_ptr, 0.0)


# ---- which loads -------------------------------------------------------------------------------------------------


def test_tutorial_03_keeps_its_b_tiles_keyed_by_scalars(cpu_ref_active):
    a, b, c = torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64)
    func, loads = _sdkir_loads(_launch(matmul_kernel, a, b, c, (32, 32, 16)))
    a_load, b_load = loads
    assert reusable_dot_operand(a_load, func) is None  # the dot's a
    leaves = reusable_dot_operand(b_load, func)
    assert leaves and not any(v.type.is_tensor for v in leaves)
    # the loop-carried offset (carried-pointer-offsets) and the k step's mask bound are among them
    body = b_load.parent
    assert body.args[2] in leaves or body.args[1] in leaves
    assert func.args[1] in leaves  # b_ptr


@pytest.mark.parametrize("kind", [1, 2, 3, 4], ids=["store-before", "atomic", "volatile", "second-use"])
def test_kernels_that_could_see_the_difference_keep_nothing(cpu_ref_active, kind):
    a, b, c = torch.randn(64, 48), torch.randn(48, 40), torch.empty(64, 40)
    compiled = _launch(_variant, a, b, c, (32, 32, 16), KIND=kind)
    func, loads = _sdkir_loads(compiled)
    assert all(reusable_dot_operand(ld, func) is None for ld in loads)
    assert "aligned_alloc" not in compiled.asm["llir"]
    want = a @ b + (b.sum(0) if kind == 4 else 0)
    torch.testing.assert_close(c, want, rtol=1e-4, atol=1e-4)


def test_a_loop_carried_tensor_is_no_function_of_scalars():
    module = parse_ttir("""module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    tt.return
  }
}""")
    func = module.ops[0]
    q = func.body.ops[2].result
    assert [v.name for v in scalar_leaves([q])] == ["x"]
    arg = func.body.ops[0].result  # a tensor without scalar inputs: no leaves, a constant tile
    assert scalar_leaves([arg]) == []


# ---- what it compiles to -------------------------------------------------------------------------------------------


def test_the_entry_allocates_per_chunk_and_the_load_tests_its_slot(cpu_ref_active):
    a, b, c = torch.randn(64, 64), torch.randn(64, 64), torch.empty(64, 64)
    kept = _launch(matmul_kernel, a, b, c, (32, 32, 16))
    llir = kept.asm["llir"]
    assert "@aligned_alloc(i64 64," in llir and "@free(" in llir
    assert "phi ptr" in llir  # the tile: the slot's data or the stack buffer
    off = _launch(matmul_kernel, a, b, c, (32, 32, 16), reuse_dot_operands=False)
    assert "aligned_alloc" not in off.asm["llir"]
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


# ---- results -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mnk,tiles,group_m",
    [
        ((512, 512, 256), (64, 32, 32), 8),  # 128 programs, chunks of 4 sharing B: hits
        ((300, 200, 90), (32, 32, 32), 8),  # ragged M, N (wrapped columns), the last k step masked
        ((256, 256, 128), (32, 64, 16), 1),  # consecutive programs differ in B: every slot missed
        ((96, 64, 4800), (32, 32, 16), 8),  # 300 k steps: past the 256 slots the tiles come from memory
    ],
)
def test_products_match_torch(cpu_ref_active, mnk, tiles, group_m):
    m, n, k = mnk
    g = torch.Generator().manual_seed(m + n + k)
    a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    c = torch.full((m, n), float("nan"))
    _launch(matmul_kernel, a, b, c, tiles, group_m)
    tol = 1e-3 if k > 1000 else 1e-4
    torch.testing.assert_close(c, a @ b, rtol=tol, atol=tol)


def test_fp16_b_tiles_are_kept_too(cpu_ref_active):
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(256, 96, generator=g).half(), torch.randn(96, 160, generator=g).half()
    c = torch.empty(256, 160)
    compiled = _launch(matmul_kernel, a, b, c, (32, 32, 32))
    assert "aligned_alloc" in compiled.asm["llir"]
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_a_new_launch_reads_b_again(cpu_ref_active):
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(256, 64, generator=g), torch.randn(64, 256, generator=g)
    c = torch.empty(256, 256)
    _launch(matmul_kernel, a, b, c, (32, 32, 16))
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    b.mul_(-2.0).add_(1.0)
    _launch(matmul_kernel, a, b, c, (32, 32, 16))
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_bounds_checked_kernels_keep_their_tiles_and_their_checks(cpu_ref_active):
    g = torch.Generator().manual_seed(9)
    a, b = torch.randn(128, 64, generator=g), torch.randn(64, 96, generator=g)
    c = torch.empty(128, 96)
    _launch(matmul_kernel, a, b, c, (32, 32, 16), check_bounds=True)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
