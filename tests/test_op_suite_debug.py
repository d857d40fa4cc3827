"""Debug ops and the edges of the extern/asm support, on every SDK backend: device_print output (format, order per
program), device_assert raised in Python (message, source line, program id; the process and later launches
survive), extern_elementwise on a plain C symbol, and clear compile-time errors for what a CPU cannot run."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl
from triton.language import core
from triton.language.extra import libdevice
from triton_backend_sdk.errors import UnsupportedError


def xfail_if_unsupported(test):
    """A backend that refuses print/assert at compile time (a named UnsupportedError) reports xfail, as the op suite
    does for its cases; any other exception still fails."""
    import functools

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except UnsupportedError as e:
            pytest.xfail(f"unsupported on {kwargs.get('backend')}: {str(e).splitlines()[0]}")

    return wrapper


@triton.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("pid", tl.program_id(0))
    tl.device_print("hex", x, hex=True)


@xfail_if_unsupported
def test_device_print_format_and_order(backend, capfd):
    x = torch.arange(8, dtype=torch.int32) * 3 - 5
    print_kernel[(2,)](x, BLOCK=4)
    out = capfd.readouterr().out.splitlines()
    assert len(out) == 2 * (4 + 1 + 4), out
    for pid in range(2):
        lines = [ln for ln in out if ln.startswith(f"pid ({pid}, 0, 0)")]
        assert lines[:4] == [f"pid ({pid}, 0, 0) idx ({i}) x: {int(x[pid * 4 + i])}" for i in range(4)]
        assert lines[4] == f"pid ({pid}, 0, 0) idx () pid: {pid}"
        assert lines[5] == f"pid ({pid}, 0, 0) idx (0) hex: 0x{int(x[pid * 4]) & 0xFFFFFFFF:08x}"


@triton.jit(noinline=True)
def _checked_scale(pid, k):
    tl.device_assert(pid < 3, "helper: pid < 3")
    return pid * k


@triton.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1)
    tl.device_assert(x > 0, "x must be positive")
    s = _checked_scale(tl.program_id(0), 2)
    tl.store(x_ptr + offs, x + s, mask=offs < n)


@xfail_if_unsupported
def test_device_assert_raises_with_message_and_program(backend):
    x = torch.ones(48, dtype=torch.int32)
    x[21] = -4
    with pytest.raises(
        AssertionError,
        match=r"test_op_suite_debug\.py:\d+:\d+: .*program \(1, 0, 0\).*"
        r"x must be positive",
    ):
        assert_kernel[(3,)](x, 48, BLOCK=16, debug=True)
    ok = torch.ones(48, dtype=torch.int32)
    assert_kernel[(3,)](ok, 48, BLOCK=16, debug=True)  # the process and later launches are fine
    assert ok.tolist() == [1 + 2 * (i // 16) for i in range(48)]


@xfail_if_unsupported
def test_device_assert_in_noinline_helper(backend):
    x = torch.ones(80, dtype=torch.int32)
    with pytest.raises(AssertionError, match="helper: pid < 3"):
        assert_kernel[(5,)](x, 80, BLOCK=16, debug=True)


@triton.jit
def assert_wide_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0).to(tl.float32)
    y = tl.exp(x) * tl.sin(x) + tl.sqrt(tl.abs(x)) - tl.cumsum(x, 0)
    tl.device_assert(x < 100, "x must be small")
    tl.store(x_ptr + offs, y.to(tl.int32), mask=offs < n)


@xfail_if_unsupported
def test_device_assert_after_earlier_kernels_were_freed(backend):
    """Kernels compiled, run and dropped one after another, so that the next one is loaded where the last one's code
    was: each must find its own assert state. (cpu_ref once cached the state by entry address: test_core's
    test_reduce_layouts, whose ttgir kernels assert inside reduce regions, then crashed; this sequence only exercises
    the path, it does not reproduce that crash deterministically.)"""
    import gc

    sig = {"x_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}
    for fn, bad, message in [
        (assert_kernel, -1, "x must be positive"),
        (assert_wide_kernel, 1000, "x must be small"),
    ] * 3:
        kernel = triton.compile(
            triton.compiler.ASTSource(fn, signature=sig, constexprs={"BLOCK": 16}), options={"debug": True}
        )
        x = torch.ones(16, dtype=torch.int32)
        x[15] = bad
        with pytest.raises(AssertionError, match=message):
            kernel[(1, 1, 1)](x, 16, 16)
        del kernel
        gc.collect()


def test_device_assert_compiled_out_without_debug(backend):
    x = torch.full((16,), -1, dtype=torch.int32)
    assert_kernel[(1,)](x, 16, BLOCK=16)
    assert (x == -1).all()


@core.extern
def c_cbrt(arg0, _semantic=None):
    """C's cbrt/cbrtf, a symbol outside libdevice: declared with the scalar signature, resolved at load time."""
    return core.extern_elementwise(
        "",
        "",
        [arg0],
        {(core.dtype("fp32"),): ("cbrtf", core.dtype("fp32")), (core.dtype("fp64"),): ("cbrt", core.dtype("fp64"))},
        is_pure=True,
        _semantic=_semantic,
    )


@triton.jit
def c_symbol_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, c_cbrt(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extern_elementwise_plain_c_symbol(backend, dtype):
    x = torch.linspace(-8, 27, 64, dtype=dtype)
    out = torch.empty_like(x)
    c_symbol_kernel[(1,)](x, out, BLOCK=64)
    torch.testing.assert_close(out.double(), torch.sign(x.double()) * x.double().abs().pow(1 / 3))


@triton.jit
def asm_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


def test_inline_asm_is_a_named_compile_error(backend):
    with pytest.raises(UnsupportedError, match="elementwise_inline_asm"):
        asm_kernel[(1,)](torch.zeros(16, dtype=torch.int32), BLOCK=16)


@triton.jit
def directed_rounding_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, libdevice.fma_rz(x, x, x))


def test_directed_rounding_is_a_named_compile_error(backend):
    """The one libdevice family the math library refuses: an f64 fma with a directed rounding mode."""
    with pytest.raises(UnsupportedError, match=re.escape("__nv_fma_rz")):
        directed_rounding_kernel[(1,)](torch.zeros(16, dtype=torch.float64), BLOCK=16)
