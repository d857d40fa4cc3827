"""Codegen reads the target from the descriptor: cpu_ref's vector width (dot register blocking, reduction lanes)
comes from `TargetDescriptor.vector_width_bits`, not from the host; `supported_dtypes` is enforced at compile time."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.analysis.dtype_check import check_dtypes, dtype_names
from triton_backend_sdk.backends.cpu_ref.codegen import RULES, lower_module
from triton_backend_sdk.backends.cpu_ref.compiler import host_descriptor
from triton_backend_sdk.errors import UnsupportedDtypeError
from triton_backend_sdk.ir import parse_ttir
from triton_backend_sdk.options import Options

_DOT = """module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %a = arith.constant dense<1.0> : tensor<16x16xf32>
    %c = arith.constant dense<0.0> : tensor<16x16xf32>
    %d = tt.dot %a, %a, %c : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    tt.return
  }
}"""

_ROW_SUM = """module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %e = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %b = tt.broadcast %e : tensor<1x64xi32> -> tensor<8x64xi32>
    %s = tt.splat %x : !tt.ptr<f32> -> tensor<8x64x!tt.ptr<f32>>
    %p = tt.addptr %s, %b : tensor<8x64x!tt.ptr<f32>>, tensor<8x64xi32>
    %v = tt.load %p : tensor<8x64x!tt.ptr<f32>>
    %m = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %c: f32):
      %t = arith.addf %a, %c : f32
      tt.reduce.return %t : f32
    }) : (tensor<8x64xf32>) -> tensor<8xf32>
    tt.return
  }
}"""


def _vector_widths(text: str, bits: int) -> set[int]:
    """Lane counts of the vector arithmetic (memory runs are 64-byte lines whatever the registers, memory.py)."""
    desc = dataclasses.replace(host_descriptor(), vector_width_bits=bits)
    llir = str(lower_module(parse_ttir(text), "k", RULES, Options(enable_fp_fusion=False), desc))
    arithmetic = [line for line in llir.splitlines() if re.search(r"= (fadd|fmul|call .*fma)", line)]
    return {int(n) for line in arithmetic for n in re.findall(r"<(\d+) x float>", line)}


@pytest.mark.parametrize("bits,lanes", [(128, 4), (256, 8), (512, 16)])
@pytest.mark.parametrize("kernel", [_DOT, _ROW_SUM], ids=["dot", "row_reduce"])
def test_vector_width_comes_from_the_descriptor(kernel: str, bits: int, lanes: int) -> None:
    assert _vector_widths(kernel, bits) == {lanes}


_EXP = """module {
  tt.func public @k(%x: !tt.ptr<f32>) {
    %v = tt.load %x : !tt.ptr<f32>
    %e = math.exp %v : f32
    tt.store %x, %e : !tt.ptr<f32>
    tt.return
  }
}"""


@pytest.mark.parametrize("avx512", [True, False])
def test_exp_scales_with_ldexp_only_where_the_descriptor_has_avx512(avx512: bool) -> None:
    """One vscalefps per vector where the target has AVX-512F; without it LLVM would make each lane of a vector
    ldexp a libm call, so the two exact power-of-two multiplies stay (the same bits either way: checked over
    2.6 million inputs, subnormal results included, when the ldexp form came in)."""
    host = host_descriptor()
    features = tuple(f for f in host.features if not f.startswith("+avx512")) + (("+avx512f",) if avx512 else ())
    desc = dataclasses.replace(host, features=features)
    llir = str(lower_module(parse_ttir(_EXP), "k", RULES, Options(), desc))
    assert ("llvm.ldexp" in llir) == avx512


def _module(dtype: str) -> str:
    return f"""module {{
  tt.func public @k(%x: !tt.ptr<{dtype}>, %n: i32) {{
    %v = tt.load %x : !tt.ptr<{dtype}>
    tt.store %x, %v : !tt.ptr<{dtype}>
    tt.return
  }}
}}"""


def test_dtype_names_of_a_module() -> None:
    assert dtype_names(parse_ttir(_module("f64"))) == {"fp64", "i32"}
    assert dtype_names(parse_ttir(_module("bf16"))) == {"bf16", "i32"}


def test_a_dtype_the_descriptor_lacks_is_refused_by_name() -> None:
    desc = dataclasses.replace(host_descriptor(), supported_dtypes=host_descriptor().supported_dtypes - {"fp64"})
    check_dtypes(parse_ttir(_module("f32")), desc)
    with pytest.raises(UnsupportedDtypeError, match=r"fp64.*cpu_ref.*supported_dtypes") as e:
        check_dtypes(parse_ttir(_module("f64")), desc)
    assert e.value.dtype == "fp64"


@triton.jit
def _double_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def test_compiling_for_a_derived_descriptor_without_fp64_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.backends.cpu_ref.compiler import CPURefBackend
    from triton_backend_sdk.driver import activate
    from triton_backend_sdk.plugins import drop_jit_caches

    base = host_descriptor()
    derived = dataclasses.replace(base, supported_dtypes=base.supported_dtypes - {"fp64"})
    monkeypatch.setattr(CPURefBackend, "describe", classmethod(lambda cls, target=None: derived))
    previous = driver.active
    triton_backend_sdk.use("cpu_ref")
    drop_jit_caches()
    try:
        x = torch.ones(8, dtype=torch.float32)
        _double_kernel[(1,)](x, 8, BLOCK=8)
        assert torch.equal(x, torch.full((8,), 2.0))
        with pytest.raises(UnsupportedDtypeError, match="fp64"):
            _double_kernel[(1,)](torch.ones(8, dtype=torch.float64), 8, BLOCK=8)
    finally:
        activate(previous)
        drop_jit_caches()


def test_a_cpu_llvm_does_not_know_is_refused_by_name() -> None:
    """GPUTarget('cpu_ref', 'whatever', 1) used to abort the process inside LLVM ("64-bit code requested on a
    subtarget that doesn't support it"); a known CPU name other than the host's still describes."""
    from triton.backends.compiler import GPUTarget
    from triton_backend_sdk.backends.cpu_ref.compiler import CPURefBackend
    from triton_backend_sdk.errors import OptionsError

    with pytest.raises(OptionsError, match="'whatever' is not a CPU LLVM knows"):
        CPURefBackend.describe(GPUTarget("cpu_ref", "whatever", 1))
    assert CPURefBackend.describe(GPUTarget("cpu_ref", "x86-64-v3", 1)).arch == "x86-64-v3"
