"""Float arithmetic on fp8 tensors (sdk/transforms/fp8_arithmetic.py) on every backend: each op computed in f32 and
rounded to the fp8 format once, checked bit for bit against torch doing the same (cpu_ref used to emit invalid LLVM
IR, an `fmul` on its i8 storage)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

FORMATS = {"fp8e5": (tl.float8e5, torch.float8_e5m2), "fp8e4nv": (tl.float8e4nv, torch.float8_e4m3fn)}


@triton.jit
def fp8_ops_kernel(x_ptr, y_ptr, o_ptr, n, F8: tl.constexpr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x_ptr + offs, mask=m, other=1.0).to(F8)
    b = tl.load(y_ptr + offs, mask=m, other=1.0).to(F8)
    if OP == "add":
        c = a + b
    elif OP == "sub":
        c = a - b
    elif OP == "mul":
        c = a * b
    elif OP == "div":
        c = a / b
    elif OP == "max":
        c = tl.maximum(a, b)
    elif OP == "chain":
        c = a * b + a
    else:
        c = tl.fma(a, b, a)
    tl.store(o_ptr + offs, c.to(tl.float32), mask=m)
    tl.store(o_ptr + n + offs, (a > b).to(tl.float32), mask=m)


def _want(op: str, a: torch.Tensor, b: torch.Tensor, f8: torch.dtype) -> torch.Tensor:
    r = lambda t: t.to(f8).float()
    fa, fb = a.float(), b.float()
    return {
        "add": lambda: r(fa + fb),
        "sub": lambda: r(fa - fb),
        "mul": lambda: r(fa * fb),
        "div": lambda: fa / fb,  # Triton's frontend divides fp8 in f32 and keeps the f32 quotient
        "max": lambda: r(torch.maximum(fa, fb)),
        "chain": lambda: r(r(fa * fb) + fa),
        "fma": lambda: r(fa * fb + fa),
    }[op]()


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "chain", "fma"])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_fp8_arithmetic_matches_torch(backend: str, fmt: str, op: str) -> None:
    tl_t, f8 = FORMATS[fmt]
    n = 1000
    g = torch.Generator().manual_seed(len(op) * 7 + len(fmt))
    x = torch.randn(n, generator=g) * 2  # products stay far below either format's largest value
    y = torch.randn(n, generator=g).sign() * (0.5 + torch.rand(n, generator=g) * 1.5)
    out = torch.full((2 * n,), float("nan"))
    fp8_ops_kernel[(triton.cdiv(n, 256),)](x, y, out, n, F8=tl_t, OP=op, BLOCK=256)
    a, b = x.to(f8), y.to(f8)
    want = _want(op, a, b, f8)
    got = out[:n]
    if op == "fma":  # a fused multiply-add rounds once; an unfused one may round the product: either is allowed
        want2 = _want("chain", a, b, f8)
        assert bool(((got == want) | (got == want2)).all())
    else:
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(out[n:], (a.float() > b.float()).float(), rtol=0, atol=0)


def test_fp8_arithmetic_pass_golden() -> None:
    """mulf on f8E5M2 becomes fp_to_fp -> mulf f32 -> fp_to_fp rtne; cmpf compares the f32 copies."""
    from triton_backend_sdk.ir import parse_ttir, print_module, verify
    from triton_backend_sdk.transforms.fp8_arithmetic import Fp8Arithmetic

    module = parse_ttir("""module {
  tt.func public @k(%a: tensor<8xf8E5M2>, %b: tensor<8xf8E5M2>) -> tensor<8xi1> {
    %c = arith.mulf %a, %b : tensor<8xf8E5M2>
    %d = arith.cmpf ogt, %c, %b : tensor<8xf8E5M2>
    tt.return %d : tensor<8xi1>
  }
}""")
    Fp8Arithmetic().run(module, None)
    verify(module)
    text = print_module(module)
    assert "arith.mulf" in text and "tensor<8xf8E5M2>" not in text.split("arith.mulf")[1].split("\n")[0]
    assert "rounding = rtne" in text
    assert text.count("tt.fp_to_fp") == 5  # a, b up; the product down; the product and b up for the compare
    assert "arith.cmpf ogt" in text and ": tensor<8xf32>" in text.split("arith.cmpf")[1].split("\n")[0]
