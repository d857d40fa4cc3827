"""cpu_ref's tl.dot reading its A operand where the load points (`uses.dot_operand_in_place`, `memory.InPlaceRead`):
which loads are left to their dot, the IR of both paths (rows read in place with the next row block prefetched; a
mask that fails anywhere falls back to the load's copy), and results against torch on full and ragged tiles."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines, lower
from triton_backend_sdk.analysis.uses import dot_operand_in_place
from triton_backend_sdk.bench.kernels import matmul, matmul_kernel
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir

ARGS = (
    "%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y: !tt.ptr<f32> {tt.divisibility = 16 : i32}, "
    "%z: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32"
)

UNMASKED_A = "%a = tt.load %ap : tensor<32x32x!tt.ptr<f32>>"
MASKED_A = """%ns = tt.splat %n : i32 -> tensor<1x32xi32>
    %mk = arith.cmpi slt, %c2, %ns : tensor<1x32xi32>
    %mb = tt.broadcast %mk : tensor<1x32xi1> -> tensor<32x32xi1>
    %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %a = tt.load %ap, %mb, %zero : tensor<32x32x!tt.ptr<f32>>"""


def _body(load_a: str = UNMASKED_A, between: str = "", b_from: str = "%y") -> str:
    """z = x @ y for row-major 32 x 32 fp32 tiles; `between` goes after the load of B, before the dot."""
    return f"""
    %r = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32>
    %c32 = arith.constant dense<32> : tensor<32x1xi32>
    %r2 = tt.expand_dims %r {{axis = 1 : i32}} : tensor<32xi32> -> tensor<32x1xi32>
    %ro = arith.muli %r2, %c32 : tensor<32x1xi32>
    %c2 = tt.expand_dims %r {{axis = 0 : i32}} : tensor<32xi32> -> tensor<1x32xi32>
    %rb = tt.broadcast %ro : tensor<32x1xi32> -> tensor<32x32xi32>
    %cb = tt.broadcast %c2 : tensor<1x32xi32> -> tensor<32x32xi32>
    %off = arith.addi %rb, %cb : tensor<32x32xi32>
    %ap0 = tt.splat %x : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
    %ap = tt.addptr %ap0, %off : tensor<32x32x!tt.ptr<f32>>, tensor<32x32xi32>
    {load_a}
    %bp0 = tt.splat {b_from} : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
    %bp = tt.addptr %bp0, %off : tensor<32x32x!tt.ptr<f32>>, tensor<32x32xi32>
    %b = tt.load %bp : tensor<32x32x!tt.ptr<f32>>
    {between}
    %acc = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
    %d = tt.dot %a, %b, %acc : tensor<32x32xf32> * tensor<32x32xf32> -> tensor<32x32xf32>
    %zp0 = tt.splat %z : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
    %zp = tt.addptr %zp0, %off : tensor<32x32x!tt.ptr<f32>>, tensor<32x32xi32>
    tt.store %zp, %d : tensor<32x32x!tt.ptr<f32>>"""


STORE_TO_A = "tt.store %ap, %b : tensor<32x32x!tt.ptr<f32>>"


def _loads(body: str) -> list[O.Load]:
    module = parse_ttir(f"module {{\n  tt.func public @k({ARGS}) {{\n{body}\n    tt.return\n  }}\n}}")
    return [op for op in module.walk() if isinstance(op, O.Load)]


# ---- the analysis -------------------------------------------------------------------------------------------------


def test_a_and_b_loads_may_be_read_by_their_dot():
    a, b = _loads(_body())
    assert (dot_operand_in_place(a), dot_operand_in_place(b)) == (0, 1)


def test_a_write_between_load_and_dot_keeps_the_load_in_place():
    a, b = _loads(_body(between=STORE_TO_A))
    assert dot_operand_in_place(a) is None  # the store may change what A's memory holds before the dot
    assert dot_operand_in_place(b) is None


def test_volatile_or_twice_used_loads_are_not_left_to_the_dot():
    (a, b) = _loads(_body(load_a="%a = tt.load %ap {isVolatile = true} : tensor<32x32x!tt.ptr<f32>>"))
    assert dot_operand_in_place(a) is None and dot_operand_in_place(b) == 1
    twice = _body().replace("tt.dot %a, %b, %acc", "tt.dot %a, %a, %acc")
    a, b = _loads(twice)
    assert dot_operand_in_place(a) is None


# ---- golden LLVM IR ----------------------------------------------------------------------------------------------


def test_unmasked_a_is_read_in_place_with_the_next_rows_prefetched():
    ir = lower(_body(), args=ARGS)
    # buffers: B's copy and the accumulator only; prefetches of the next 8 rows (3 lines each, the last element's
    # line for a row not starting on one), then the k loop broadcasting A's elements straight from its rows
    assert ir.count("alloca [1024 x float]") == 2
    assert ir.count('call void @"llvm.prefetch.p0"') == 8 * 3
    check_lines(
        ir,
        """
        call void @"llvm.prefetch.p0"(ptr
        mk.k:
        load float, ptr
        insertelement <16 x float>
        call <16 x float> @"llvm.fma.v16f32"
        mk.done:
    """,
    )


def test_masked_a_tests_its_mask_once_and_falls_back_to_the_copy():
    ir = lower(_body(load_a=MASKED_A), args=ARGS)
    # the mask is constant along rows (AxisInfo), so one row of it is tested; then two products: in place, or
    # after the copy the load would have made (a third 32x32 buffer)
    assert ir.count("alloca [1024 x float]") == 3
    assert ir.count("mk.k") >= 2 and ir.count("\nmk.k:") == 1 and ir.count("\nmk.k.1:") == 1
    check_lines(
        ir,
        """
        %"all_true" = alloca [1 x i8]
        store i8 1, ptr %"all_true"
        load i8, ptr %"all_true"
        icmp ne i8
        br i1
    """,
    )
    assert "and i8" in ir  # the test's loop (blocks print in creation order: after the branch it feeds)


def test_store_between_load_and_dot_copies_a():
    ir = lower(_body(between=STORE_TO_A), args=ARGS)
    assert "llvm.prefetch" not in ir
    assert ir.count("alloca [1024 x float]") == 3


# ---- results ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mnk,tiles",
    [
        ((256, 128, 192), (64, 64, 32)),  # every tile whole: A read in place throughout
        ((100, 72, 90), (32, 32, 32)),  # ragged: M wraps (offs % M), the last k block masked (copy path)
        ((64, 256, 48), (64, 128, 32)),  # K = 48: the second k block half masked
        ((128, 128, 64), (128, 128, 32)),  # the bench's tiles
    ],
)
def test_tutorial_matmul_matches_torch(cpu_ref_active, mnk, tiles):
    m, n, k = mnk
    g = torch.Generator().manual_seed(m * n + k)
    a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    c = torch.full((m, n), float("nan"))
    matmul(a, b, c, *tiles)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mnk", [(96, 64, 80), (128, 64, 128)])
def test_bf16_a_is_read_in_place_and_fp16_a_copied(cpu_ref_active, dtype, mnk):
    """Half operands into an fp32 product: a bf16 A's rows are read in place (their next row block prefetched) and
    each element widened as the microkernel broadcasts it, an fp16 A is copied (its vectorized conversion is
    faster); K = 80 leaves a masked last k step, which takes the copy."""
    m, n, k = mnk
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(m, k, generator=g).to(dtype), torch.randn(k, n, generator=g).to(dtype)
    c = torch.empty(m, n)
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 32),)
    h = matmul_kernel[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BM=32, BN=32, BK=32, GROUP_M=8)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)
    assert ("call void @llvm.prefetch" in h.asm["llir"]) == (dtype == torch.bfloat16)


@triton.jit
def _dot_after_overwrite(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    """a = x; x = y; z = a @ y: the dot must see x as it was loaded."""
    r = tl.arange(0, N)
    off = r[:, None] * N + r[None, :]
    a = tl.load(x_ptr + off)
    b = tl.load(y_ptr + off)
    tl.store(x_ptr + off, b)
    tl.store(z_ptr + off, tl.dot(a, b))


def test_dot_sees_a_as_loaded_before_a_store_to_it(cpu_ref_active):
    g = torch.Generator().manual_seed(11)
    x, y = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
    expected = x @ y
    z = torch.empty(32, 32)
    _dot_after_overwrite[(1,)](x, y, z, N=32)
    torch.testing.assert_close(z, expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(x, y)


@triton.jit
def _batched(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    """Batched 3-D dot (2 x 32 x 32) with A read in place."""
    bt = tl.arange(0, 2)[:, None, None]
    r = tl.arange(0, N)
    off = bt * N * N + r[None, :, None] * N + r[None, None, :]
    tl.store(z_ptr + off, tl.dot(tl.load(x_ptr + off), tl.load(y_ptr + off)))


def test_batched_dot_reads_each_batch_in_place(cpu_ref_active):
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(2, 32, 32, generator=g), torch.randn(2, 32, 32, generator=g)
    z = torch.empty(2, 32, 32)
    _batched[(1,)](x, y, z, N=32)
    torch.testing.assert_close(z, torch.bmm(x, y), rtol=1e-4, atol=1e-4)


def test_column_runs_covering_a_row_block_are_read_in_place():
    from triton_backend_sdk.backends.cpu_ref.codegen.dot import _reads_in_place
    from triton_backend_sdk.backends.cpu_ref.codegen.memory import InPlaceRead

    def reads(whole: bool, column: int, mr: int) -> bool:
        return _reads_in_place(InPlaceRead(None, whole, column), (mr, 4, 16))

    assert reads(True, 1, 4) and reads(False, 16, 4) and reads(False, 4, 4)
    assert not reads(False, 2, 4) and not reads(False, 1, 1) and not reads(False, 1, 4)


@triton.jit
def _unmasked_matmul(a_ptr, b_ptr, c_ptr, sam, sak, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b over whole tiles (no mask): a's tile read at (sam, sak) strides, b and c row-major."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn, rk = tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak)
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_transposed_is_read_down_its_columns(cpu_ref_active, dtype):
    """x.T @ w: A's tile is contiguous down its columns; the dot reads it there (no 64x16 copy of it is made)."""
    g = torch.Generator().manual_seed(3)
    m, k, n = 128, 48, 32
    x = torch.randn(k, m, generator=g).to(dtype)
    a = x.t()
    b = torch.randn(k, n, generator=g).to(dtype)
    c = torch.empty(m, n)
    h = _unmasked_matmul[(m // 64,)](a, b, c, a.stride(0), a.stride(1), k, BM=64, BN=n, BK=16)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)
    assert f"[{64 * 16} x {'float' if dtype == torch.float32 else 'bfloat'}]" not in h.asm["llir"]


@pytest.mark.parametrize("mnk", [(256, 192, 256), (200, 96, 80)])
def test_tutorial_matmul_of_a_transposed_matches_torch(cpu_ref_active, mnk):
    """x.T @ w through tutorial 03's kernel: wrapped rows (`% M`), a masked last k step (K = 80) on the copy."""
    m, n, k = mnk
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(k, m, generator=g).t(), torch.randn(k, n, generator=g)
    c = torch.empty(m, n)
    matmul(a, b, c, 64, 32, 32)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
