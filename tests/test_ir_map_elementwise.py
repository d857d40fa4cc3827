"""`tt.map_elementwise` (`tl.map_elementwise`) and `ub.poison` on every backend, against torch."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def _fma1(a, b):
    return a * b + 1.0


@triton.jit
def _branchy(a, b):
    if a > b:
        return a - b
    return b * 0.5


@triton.jit
def _pair(a, b):
    return a + b, a * b


@triton.jit
def map_kernel(x_ptr, y_ptr, o_ptr, p_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    if MODE == 0:
        z = tl.map_elementwise(_fma1, x, y)
        tl.store(o_ptr + offs, z, mask=mask)
    elif MODE == 1:
        z = tl.map_elementwise(_branchy, x, y)
        tl.store(o_ptr + offs, z, mask=mask)
    else:
        s, p = tl.map_elementwise(_pair, x, y)
        tl.store(o_ptr + offs, s, mask=mask)
        tl.store(p_ptr + offs, p, mask=mask)


def _expected(mode: int, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    if mode == 0:
        return x * y + 1.0, None
    if mode == 1:
        return torch.where(x > y, x - y, y * 0.5), None
    return x + y, x * y


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("n", [1, 300])
def test_map_elementwise_matches_torch(backend: str, mode: int, n: int) -> None:
    g = torch.Generator().manual_seed(n + mode)
    x, y = torch.randn(n, generator=g), torch.randn(n, generator=g)
    out, prod = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    map_kernel[(triton.cdiv(n, 128),)](x, y, out, prod, n, MODE=mode, BLOCK=128)
    want, want_p = _expected(mode, x, y)
    torch.testing.assert_close(out, want)
    if want_p is not None:
        torch.testing.assert_close(prod, want_p)


#: Triton's front end leaves `ub.poison` for values no path defines (canonicalization mostly removes them), so the
#: kernel is written in TTIR: poison in the branch a select never takes, and a poison scalar left unused.
POISON_TTIR = """module {
  tt.func public @poison_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f32>, %n: i32) {
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %n_s = tt.splat %n : i32 -> tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %n_s : tensor<64xi32>
    %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %a = tt.addptr %p, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %x = tt.load %a, %mask : tensor<64x!tt.ptr<f32>>
    %u = ub.poison : tensor<64xf32>
    %s = ub.poison : f32
    %y = arith.select %mask, %x, %u : tensor<64xi1>, tensor<64xf32>
    %o = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %b = tt.addptr %o, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %b, %y, %mask : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_poison_in_an_untaken_branch(backend: str, tmp_path) -> None:
    path = tmp_path / "poison_kernel.ttir"
    path.write_text(POISON_TTIR)
    kernel = triton.compile(str(path))
    x = torch.randn(64, generator=torch.Generator().manual_seed(5))
    out = torch.full_like(x, float("nan"))
    kernel[(1, 1, 1)](x, out, 41)
    torch.testing.assert_close(out[:41], x[:41])
    assert out[41:].isnan().all()
    assert "ub.poison" in kernel.asm["ttir"]
