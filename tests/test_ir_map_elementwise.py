"""`tt.map_elementwise` (`tl.map_elementwise`) and `ub.poison` on every backend, against torch."""

from __future__ import annotations

import re

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


@triton.jit
def _divmod2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@triton.jit
def _mix4(a0, a1, a2, a3, b0, b1, b2, b3):
    """Uses its elements' positions: element k of each group of 4 gets a different formula."""
    return a0 + b0, a1 - b1, a2 * b2, a3 + 2.0 * b3


@triton.jit
def pack_kernel(x_ptr, y_ptr, o_ptr, p_ptr, n, PACK: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.program_id(0) * R * C + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    y = tl.load(y_ptr + offs, mask=mask, other=1)
    if PACK == 2:
        q, r = tl.map_elementwise(_divmod2, x, y, pack=2)
        tl.store(o_ptr + offs, q, mask=mask)
        tl.store(p_ptr + offs, r, mask=mask)
    else:
        z = tl.map_elementwise(_mix4, x, y, pack=4)[0]
        tl.store(o_ptr + offs, z, mask=mask)


@pytest.mark.parametrize("shape", [(1, 64), (4, 32), (8, 4)])
@pytest.mark.parametrize("n", [256, 181])
def test_map_elementwise_pack2_divmod(backend: str, shape: tuple[int, int], n: int) -> None:
    g = torch.Generator().manual_seed(n)
    x = torch.randint(0, 1 << 30, (n,), generator=g, dtype=torch.int32)
    y = torch.randint(1, 1 << 12, (n,), generator=g, dtype=torch.int32)
    q, r = torch.full_like(x, -7), torch.full_like(x, -7)
    R, C = shape
    pack_kernel[(triton.cdiv(n, R * C),)](x, y, q, r, n, PACK=2, R=R, C=C)
    torch.testing.assert_close(q, x // y)
    torch.testing.assert_close(r, x % y)


@pytest.mark.parametrize("shape", [(1, 128), (4, 16)])
def test_map_elementwise_pack4_keeps_positions(backend: str, shape: tuple[int, int]) -> None:
    """Element k of each row-major group of four gets formula k: the unpacking keeps every element's place."""
    n = 300
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(n, generator=g), torch.randn(n, generator=g)
    out = torch.full_like(x, float("nan"))
    R, C = shape
    pack_kernel[(triton.cdiv(n, R * C),)](x, y, out, out, n, PACK=4, R=R, C=C)
    k = torch.arange(n) % 4
    want = torch.where(k == 0, x + y, torch.where(k == 1, x - y, torch.where(k == 2, x * y, x + 2.0 * y)))
    torch.testing.assert_close(out, want)


def test_unpack_map_elementwise_golden() -> None:
    """pack = 2 over tensor<4x8xi32>: reshape to [16, 2], one split per source, the region kept, join, reshape."""
    from triton_backend_sdk.ir import parse_ttir, print_module, verify
    from triton_backend_sdk.transforms.unpack_map_elementwise import UnpackMapElementwise

    src = """module {
  tt.func public @k(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>) -> tensor<4x8xi32> {
    %0 = "tt.map_elementwise"(%a, %b) <{pack = 2 : i32}> ({
    ^bb0(%a0: i32, %a1: i32, %b0: i32, %b1: i32):
      %s0 = arith.addi %a0, %b1 : i32
      %s1 = arith.subi %a1, %b0 : i32
      tt.map_elementwise.return %s0, %s1 : i32, i32
    }) : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
    tt.return %0 : tensor<4x8xi32>
  }
}
"""
    module = parse_ttir(src)
    UnpackMapElementwise().run(module, None)
    verify(module)
    got = [line.strip() for line in print_module(module).splitlines()]
    ops = [re.match(r'"?([\w.]+)', line.split(" = ", 1)[1]).group(1) for line in got if " = " in line]
    assert ops == [
        "tt.reshape",
        "tt.split",
        "tt.reshape",
        "tt.split",
        "tt.map_elementwise",
        "arith.addi",
        "arith.subi",
        "tt.join",
        "tt.reshape",
    ], got
    assert "pack" not in next(line for line in got if "tt.map_elementwise" in line and "=" in line)
    assert any("tensor<16x2xi32>" in line and "tt.reshape" in line for line in got)
    assert any(line.startswith("tt.return") and "tensor<4x8xi32>" in line for line in got)


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
