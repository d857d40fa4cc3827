"""`check_bounds=True` (sdk/transforms/bounds_check.py, sdk/bounds.py): out-of-bounds accesses are reported with the
kernel's source location, argument and program id instead of reading garbage or faulting, on every backend; in-bounds
kernels give the same results as without it; what cannot be checked is named at compile time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.bounds import METADATA_KEY, UNCHECKED_KEY, BoundsWarning, checked_args, extent
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import PassContext
from triton_backend_sdk.transforms.bounds_check import BoundsCheck, pointer_roots

CB = {"check_bounds": True}


# --- the pass -----------------------------------------------------------------------------------------------------
LOOP = """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %offs = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ps = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %p0 = tt.addptr %ps, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %s8 = tt.splat %c8 : i32 -> tensor<8xi32>
    %p = scf.for %i = %c0 to %n step %c1 iter_args(%q = %p0) -> (tensor<8x!tt.ptr<f32>>) : i32 {
      %v = tt.load %q : tensor<8x!tt.ptr<f32>>
      %ys = tt.splat %y : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
      %yp = tt.addptr %ys, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      %m = arith.cmpi slt, %offs, %s8 : tensor<8xi32>
      tt.store %yp, %v, %m : tensor<8x!tt.ptr<f32>>
      %q2 = tt.addptr %q, %s8 : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      scf.yield %q2 : tensor<8x!tt.ptr<f32>>
    }
    tt.return
  }
}"""


def test_pass_checks_loop_carried_and_masked_accesses_against_their_argument() -> None:
    module = parse_ttir(LOOP)
    meta: dict = {}
    BoundsCheck().run(module, PassContext(Options(check_bounds=True), None, meta))  # type: ignore[arg-type]
    verify(module)
    text = print_module(module)
    assert meta[METADATA_KEY] == 3
    check_lines(
        text,
        """
        tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32, %tb_bounds: !tt.ptr<i64>)
        tt.ptr_to_int %x : !tt.ptr<f32> -> i64
        tt.addptr %tb_bounds
        tt.load
        arith.subi
        tt.ptr_to_int %y : !tt.ptr<f32> -> i64
        scf.for
        tt.ptr_to_int %q : tensor<8x!tt.ptr<f32>> -> tensor<8xi64>
        arith.cmpi sge
        arith.cmpi sle
        "out-of-bounds tl.load through 'x' (outside its tensor)" : tensor<8xi1>
        tt.load %q
        arith.xori %m
        arith.ori
        "out-of-bounds tl.store through 'y' (outside its tensor)" : tensor<8xi1>
        tt.store %yp
        """,
    )


def test_pointer_roots_follow_selects_loops_and_give_up_on_loaded_pointers() -> None:
    module = parse_ttir(
        """module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %pp: !tt.ptr<!tt.ptr<f32>>, %c: i1) {
    %s = arith.select %c, %x, %y : !tt.ptr<f32>
    %l = tt.load %pp : !tt.ptr<!tt.ptr<f32>>
    %v = tt.load %s : !tt.ptr<f32>
    %w = tt.load %l : !tt.ptr<f32>
    tt.return
  }
}"""
    )
    func = module.ops[0]
    roots = pointer_roots(func)
    by_name = {v.name: r for v, r in roots.items() if v.name}
    assert by_name["s"] == {0, 1} and by_name["l"] == {-1} and by_name["pp"] == {2}
    meta = {"name": "k"}
    BoundsCheck().run(module, PassContext(Options(check_bounds=True), None, meta))  # type: ignore[arg-type]
    assert [u.split(" at ")[0] for u in meta[UNCHECKED_KEY]] == ["tl.load", "tl.load"]
    with pytest.warns(BoundsWarning, match=r"2 access\(es\) of k not checked"):
        assert checked_args(meta) == 4


def test_option_from_environment(monkeypatch) -> None:
    monkeypatch.setenv("TRITON_SDK_CHECK_BOUNDS", "1")
    assert Options.from_kwargs({}).check_bounds
    assert not Options.from_kwargs({"check_bounds": False}).check_bounds
    monkeypatch.setenv("TRITON_SDK_CHECK_BOUNDS", "0")
    assert not Options.from_kwargs({}).check_bounds
    assert Options(check_bounds=True).hash() != Options().hash()


def test_extent_of_views_and_non_tensors() -> None:
    base = torch.zeros(100)
    assert extent(base) == (0, 400)
    assert extent(base[10:20]) == (-40, 360)
    assert extent(7) == (-(2**63), 2**63 - 1)


# --- on the backends ----------------------------------------------------------------------------------------------
@triton.jit
def _copy_masked(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n, other=-1.0) * 2, mask=offs < n)


@triton.jit
def _copy_unmasked(x, y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs))


@triton.jit
def _shift_read(x, y, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs + shift, mask=offs < n), mask=offs < n)


def test_in_bounds_kernels_unchanged(backend) -> None:
    n = 1000
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    _copy_masked[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64, **CB)
    torch.testing.assert_close(y, x * 2, rtol=0, atol=0)


def test_unmasked_load_past_the_end_is_reported(backend) -> None:
    x, y = torch.randn(100), torch.zeros(128)
    with pytest.raises(AssertionError) as e:
        _copy_unmasked[(4,)](x, y, BLOCK=32, **CB)
    msg = str(e.value)
    assert "test_bounds_check.py:" in msg and "_copy_unmasked" in msg and "program (3, 0, 0)" in msg
    assert "out-of-bounds tl.load through 'x'" in msg
    assert torch.equal(y[:96], x[:96])  # programs 0-2 ran and are right


def test_store_past_the_end_is_reported_and_not_done(backend) -> None:
    storage = torch.full((200,), 7.0)
    x = torch.randn(128)
    _copy_unmasked[(4,)](x, storage[:128], BLOCK=32, **CB)  # past the view's 100, inside its storage: allowed
    assert torch.equal(storage[:128], x)
    storage.fill_(7.0)
    with pytest.raises(AssertionError, match=r"program \(3, 0, 0\).*tl.store through 'y'"):
        _copy_unmasked[(4,)](x, storage[100:], BLOCK=32, **CB)  # program 3 would end 28 floats past the storage
    assert torch.equal(storage[100:196], x[:96])
    assert torch.equal(storage[196:], torch.full((4,), 7.0))  # program 3 stored nothing


def test_view_may_reach_before_its_start_inside_the_storage(backend) -> None:
    base = torch.randn(200)
    view = base[50:150]
    y = torch.empty(100)
    _shift_read[(2,)](view, y, 100, -50, BLOCK=64, **CB)
    assert torch.equal(y, base[:100])
    with pytest.raises(AssertionError, match="tl.load through 'x'"):
        _shift_read[(2,)](view, y, 100, -51, BLOCK=64, **CB)


@triton.jit
def _matmul_rows(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * K + rk[None, :]
    pb = b + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        ma = (rm[:, None] < M) & (rk[None, :] + k < K)
        mb = (rk[:, None] + k < K) & (rn[None, :] < N)
        acc += tl.dot(tl.load(pa, mask=ma, other=0.0), tl.load(pb, mask=mb, other=0.0), input_precision="ieee")
        pa += BK
        pb += BK * N
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_loop_carried_pointers_checked_and_correct(backend) -> None:
    m, n, k = 37, 16, 40
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.zeros(m, n)
    _matmul_rows[(triton.cdiv(m, 16),)](a, b, c, m, n, k, BM=16, BN=16, BK=16, **CB)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(AssertionError, match="tl.load through 'b'"):  # b one row short
        _matmul_rows[(triton.cdiv(m, 16),)](a, b[:-1].clone(), c, m, n, k, BM=16, BN=16, BK=16, **CB)


@triton.jit
def _scatter_add(x, idx, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out + tl.load(idx + offs, mask=m), tl.load(x + offs, mask=m), mask=m)


def test_atomic_at_a_bad_index_is_reported(backend) -> None:
    x = torch.randn(50)
    idx = torch.randint(0, 10, (50,), dtype=torch.int32)
    out = torch.zeros(10)
    _scatter_add[(1,)](x, idx, out, 50, BLOCK=64, **CB)
    torch.testing.assert_close(out, torch.zeros(10).index_add_(0, idx.long(), x), rtol=1e-5, atol=1e-5)
    idx[17] = 10
    with pytest.raises(AssertionError, match="tl.atomic_add through 'out'"):
        _scatter_add[(1,)](x, idx, out, 50, BLOCK=64, **CB)


@triton.jit
def _scalar_at(x, y, i):
    tl.store(y, tl.load(x + i))


def test_scalar_access(backend) -> None:
    x, y = torch.arange(10, dtype=torch.int64), torch.zeros(1, dtype=torch.int64)
    _scalar_at[(1,)](x, y, 9, **CB)
    assert y.item() == 9
    with pytest.raises(AssertionError, match="tl.load through 'x'"):
        _scalar_at[(1,)](x, y, 10, **CB)
    with pytest.raises(AssertionError, match="tl.load through 'x'"):
        _scalar_at[(1,)](x, y, -1, **CB)


@triton.jit
def _either(x, y, o, pick_x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.where(pick_x, x, y)
    tl.store(o + offs, tl.load(p + offs))


def test_access_of_several_origins_warns_and_runs(backend) -> None:
    x, y, o = torch.randn(16), torch.randn(16), torch.zeros(16)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _either[(1,)](x, y, o, 0, BLOCK=16, **CB)
    assert any(issubclass(w.category, BoundsWarning) and "tl.load at" in str(w.message) for w in seen)
    assert torch.equal(o, y)


GUARDED = textwrap.dedent(
    """
    import ctypes, mmap, sys
    import torch, triton, triton.language as tl
    import triton_backend_sdk

    triton_backend_sdk.use(sys.argv[1])

    @triton.jit
    def read_past(x, y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs))

    page = mmap.PAGESIZE
    mm = mmap.mmap(-1, 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert ctypes.CDLL(None).mprotect(ctypes.c_void_p(base + page), page, 0) == 0
    x = torch.frombuffer(mm, dtype=torch.float32, count=page // 4)[-8:]  # its storage ends at the guard page
    y = torch.zeros(64)
    try:
        read_past[(1,)](x, y, BLOCK=64, check_bounds=True)
    except AssertionError as e:
        print("reported:", e)
    """
)


def test_access_that_would_fault_is_reported_instead(backend, tmp_path) -> None:
    """Without the check this read faults on the PROT_NONE page after the tensor (cpu_ref; PoCL copies the storage
    to a buffer of its own, where it reads garbage instead)."""
    script = tmp_path / "guarded.py"
    script.write_text(GUARDED)
    cmd = [sys.executable, str(script), backend.split("@")[0]]
    run = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "reported:" in run.stdout and "tl.load through 'x'" in run.stdout


@triton.jit
def _positive(x, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o + offs, tl.load(x + offs, mask=offs < n) > 0, mask=offs < n + 1)


def test_bool_store_through_a_bitcast_pointer_is_checked(backend) -> None:
    """A bool tensor is stored through `tt.bitcast` of its pointer to i8: the bitcast keeps the pointer's origin."""
    x = torch.randn(50)
    o = torch.zeros(50, dtype=torch.bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsWarning)
        _positive[(1,)](x, o, 49, BLOCK=64, **CB)
        assert torch.equal(o[:49], x[:49] > 0)
        with pytest.raises(AssertionError, match="tl.store through 'o'"):
            _positive[(1,)](x, o, 50, BLOCK=64, **CB)
