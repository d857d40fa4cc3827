"""`tl.atomic_load` / `tl.atomic_store` on every backend: cpu_ref renders them natively, opencl through the shared
lowering to `tt.atomic_rmw` (sdk/transforms/atomics.py). Bit-exact copies under ragged masks for every width and
float/int dtype, stores of many programs racing on one element and on the halves of one 32-bit word, loads that
observe other programs' updates, and a spin lock released by an atomic store."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir, print_module
from triton_backend_sdk.pipeline import PassContext
from triton_backend_sdk.transforms.atomics import AtomicLoadStore

DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float64,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
]
_INT_OF = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(_INT_OF[t.element_size()])


def _random(n: int, dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """Random bit patterns (NaNs and subnormals included for floats: the copy must keep every bit)."""
    it = _INT_OF[torch.empty(0, dtype=dtype).element_size()]
    info = torch.iinfo(it)
    return torch.randint(info.min, info.max, (n,), generator=g, dtype=torch.int64).to(it).view(dtype)


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, SEM_LOAD: tl.constexpr, SEM_STORE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.atomic_load(x_ptr + offs, mask=m, sem=SEM_LOAD)
    tl.atomic_store(y_ptr + offs, v, mask=m, sem=SEM_STORE)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_atomic_load_store_copy_bits_under_mask(backend: str, dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(7)
    n = 200
    x = _random(256, dtype, g)
    y = _random(256, dtype, g)
    before = y.clone()
    _copy_kernel[(4,)](x, y, n, "acquire", "release", BLOCK=64)
    assert torch.equal(_bits(y[:n]), _bits(x[:n]))
    assert torch.equal(_bits(y[n:]), _bits(before[n:])), "a masked-off lane was written"


def test_atomic_load_store_relaxed_and_scalar(backend: str) -> None:
    x = torch.arange(64, dtype=torch.float32) - 3.5
    y = torch.zeros(64)
    _copy_kernel[(1,)](x, y, 64, "relaxed", "relaxed", BLOCK=64)
    assert torch.equal(y, x)


@triton.jit
def _race_kernel(cell_ptr, halves_ptr, ROUNDS: tl.constexpr):
    """Every program stores its own pattern to one shared cell, and to its own 16-bit element of `halves` (whose
    neighbours share 32-bit words with it), ROUNDS times."""
    p = tl.program_id(0)
    for _ in range(ROUNDS):
        tl.atomic_store(cell_ptr, (p * 0x01010101).to(tl.int32))
        tl.atomic_store(halves_ptr + p, (p * 0x0101 + 1).to(tl.int16))


def test_atomic_store_races_leave_a_whole_value(backend: str) -> None:
    programs = 48
    cell = torch.zeros(1, dtype=torch.int32)
    halves = torch.full((programs,), -1, dtype=torch.int16)
    _race_kernel[(programs,)](cell, halves, ROUNDS=20)
    assert int(cell) in {p * 0x01010101 for p in range(programs)}, hex(int(cell))
    assert torch.equal(halves, (torch.arange(programs) * 0x0101 + 1).to(torch.int16))


@triton.jit
def _count_kernel(counter_ptr, seen_ptr, f_ptr):
    p = tl.program_id(0)
    tl.atomic_add(counter_ptr, 1)
    seen = tl.atomic_load(counter_ptr)
    tl.store(seen_ptr + p, seen)
    tl.atomic_add(f_ptr, 0.5)
    tl.store(seen_ptr + tl.num_programs(0) + p, tl.atomic_load(f_ptr, sem="relaxed").to(tl.int32))


def test_atomic_load_observes_updates(backend: str) -> None:
    programs = 64
    counter = torch.zeros(1, dtype=torch.int32)
    f = torch.zeros(1, dtype=torch.float32)
    seen = torch.zeros(2 * programs, dtype=torch.int32)
    _count_kernel[(programs,)](counter, seen, f)
    assert int(counter) == programs and float(f) == programs / 2
    assert ((seen[:programs] >= 1) & (seen[:programs] <= programs)).all()
    assert ((seen[programs:] >= 0) & (seen[programs:] <= programs // 2)).all()


@triton.jit
def _lock_kernel(lock_ptr, total_ptr, x_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") != 0:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + tl.load(x_ptr + tl.program_id(0)))
    tl.atomic_store(lock_ptr, 0, sem="release")


def test_spin_lock_released_by_atomic_store(backend: str) -> None:
    programs = 32
    lock = torch.zeros(1, dtype=torch.int32)
    total = torch.zeros(1, dtype=torch.int32)
    x = torch.randint(0, 1000, (programs,), dtype=torch.int32)
    _lock_kernel[(programs,)](lock, total, x)
    assert int(total) == int(x.sum()) and int(lock) == 0


def test_lowering_keeps_mask_sem_and_scope_on_the_integer_view() -> None:
    module = parse_ttir(
        """module {
  tt.func public @k(%p: tensor<8x!tt.ptr<bf16>>, %m: tensor<8xi1>, %v: tensor<8xbf16>) {
    %0 = tt.atomic_load relaxed, cta, %p, %m : (tensor<8x!tt.ptr<bf16>>, tensor<8xi1>) -> tensor<8xbf16>
    tt.atomic_store release, sys, %p, %v, %m : tensor<8x!tt.ptr<bf16>>
    tt.return
  }
}"""
    )
    AtomicLoadStore().run(module, PassContext(None, None, {}))  # type: ignore[arg-type]
    ops = [type(op) for op in module.walk()]
    assert O.AtomicLoad not in ops and O.AtomicStore not in ops
    text = print_module(module)
    assert "tt.bitcast %p : tensor<8x!tt.ptr<bf16>> -> tensor<8x!tt.ptr<i16>>" in text
    assert "tt.atomic_rmw or, relaxed, cta" in text
    assert "tt.atomic_rmw exch, release, sys" in text
    assert text.count("%m") == 3  # the argument and both masks


@triton.jit
def _row_sum_add_kernel(z_ptr, x_ptr, old_ptr, R: tl.constexpr, C: tl.constexpr, DT: tl.constexpr):
    rows = tl.arange(0, R)
    x = tl.load(x_ptr + rows[:, None] * C + tl.arange(0, C)[None, :]).to(tl.float32)
    old = tl.atomic_add(z_ptr + rows, tl.sum(x, axis=1).to(DT))
    tl.store(old_ptr + rows, old)


@pytest.mark.parametrize("shape", [(8, 8), (2, 8), (32, 32), (64, 4)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_atomic_add_16bit_float_of_a_row_sum(backend: str, shape: tuple[int, int], dtype: torch.dtype) -> None:
    """Upstream test_tensor_atomic_rmw[shape42-1-1-bfloat16-True]: on cpu_ref, LLVM's own expansion of a bf16
    `atomicrmw fadd` left garbage (up to 2e38) in 4 of 8 elements; the sum is now one compare-exchange loop rounded
    once by the SDK's bf16 rounding. Each element: old + (row sum rounded to the dtype), rounded once."""
    tl_dt = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}[dtype]
    g = torch.Generator().manual_seed(shape[0] * 100 + shape[1])
    # quarters: every f32 row sum is exact in any order, so only the two roundings to the dtype remain
    x = (torch.randint(-8, 8, shape, generator=g) * 0.25 + 0.125).to(dtype)
    z0 = torch.randn(shape[0], generator=g).to(dtype)
    z, old = z0.clone(), torch.zeros_like(z0)
    _row_sum_add_kernel[(1,)](z, x, old, R=shape[0], C=shape[1], DT=tl_dt)
    addend = x.float().sum(1).to(dtype).float()
    want = (z0.float() + addend).to(dtype)
    assert torch.equal(old, z0)
    torch.testing.assert_close(z, want, rtol=0, atol=0)
