"""Bad input fails loudly with errors that name what is wrong and where."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton.compiler import ASTSource
from triton_backend_sdk.demo import add_kernel
from triton_backend_sdk.errors import LoweringError, OptionsError
from triton_backend_sdk.options import Options


@triton.jit
def inline_asm_kernel(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + tl.arange(0, 16), y)


def test_missing_rule_names_op_dtype_and_kernel_line(backend):
    x = torch.arange(16, dtype=torch.int32)
    with pytest.raises(NotImplementedError) as info:
        inline_asm_kernel[(1,)](x, torch.empty_like(x))
    err = info.value
    assert isinstance(err, LoweringError)
    msg = str(err)
    assert "tt.elementwise_inline_asm" in msg and "i32" in msg
    assert f"{__file__}:" in msg, msg
    with open(__file__) as f:
        lines = f.read().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "y = tl.inline_asm_elementwise" in text)
    assert f"{__file__}:{line}:" in msg
    assert "repro" in msg and "TRITON_SDK_DUMP_DIR" in msg


def _compiled_add(backend: str):
    src = ASTSource(
        add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 64},
    )
    return triton.compile(src, target=triton_backend_sdk.target(backend))


class FakeCudaTensor:
    """Stands in for a CUDA tensor on a machine without one."""

    dtype = torch.float32
    is_cpu = False
    device = torch.device("cuda", 0) if hasattr(torch, "device") else None

    def data_ptr(self) -> int:
        return 0x1000


def test_cuda_tensor_is_rejected_with_the_argument_name(backend):
    k = _compiled_add(backend)
    x = torch.rand(8)
    with pytest.raises(TypeError, match="y_ptr"):
        k[(1, 1, 1)](x, FakeCudaTensor(), x, 8, 64)


def test_none_pointer_is_rejected_with_the_argument_name(backend):
    k = _compiled_add(backend)
    x = torch.rand(8)
    with pytest.raises(TypeError, match="out_ptr"):
        k[(1, 1, 1)](x, x, None, 8, 64)


def test_wrong_scalar_type_is_rejected_with_the_argument_name(backend):
    k = _compiled_add(backend)
    x = torch.rand(8)
    with pytest.raises(TypeError, match="'n'"):
        k[(1, 1, 1)](x, x, x, 8.5, 64)


def test_fake_cuda_tensor_through_jit_launch(backend):
    x = torch.rand(8)
    with pytest.raises(TypeError, match="x_ptr"):
        add_kernel[(1,)](FakeCudaTensor(), x, x, 8, BLOCK=64)


def test_options_are_validated():
    with pytest.raises(OptionsError, match="num_warps"):
        Options(num_warps=3)
    with pytest.raises(OptionsError, match="default_dot_input_precision"):
        Options(default_dot_input_precision="fp8")
    a, b = Options(), Options(num_warps=8)
    assert a.hash() != b.hash() and a.hash() == Options().hash()
    with pytest.raises(Exception, match="frozen|cannot assign"):
        a.num_warps = 2  # type: ignore[misc]


def test_unknown_launch_option_is_rejected(backend):
    x = torch.rand(8)
    with pytest.raises(KeyError, match="not_an_option"):
        add_kernel[(1,)](x, x, x, 8, BLOCK=64, not_an_option=1)
