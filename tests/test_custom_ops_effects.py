"""Custom ops with memory effects: pointer arguments (`"*fp32"`) and `pure=False`. Such an op runs exactly once per
element at its place in the kernel: a load after it sees its writes, a load before it is not moved past it, and it
runs when its result is unused. The op here is an atomic exchange, as a vendor's memory op would be."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.custom_ops import custom_op
from triton_backend_sdk.ir import parse_ttir

exchange = custom_op("tsdkfx.exchange", {("*fp32", "fp32"): "fp32"}, pure=False, doc="old = *p; *p = v")


@exchange.lowering("cpu_ref")
def _exchange_cpu(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift

    lift(ctx, op, lambda p, v: ctx.b.atomic_rmw("xchg", p, v, "monotonic"))


@exchange.lowering("opencl")
def _exchange_cl(ctx, op) -> None:  # type: ignore[no-untyped-def]
    from triton_backend_sdk.backends.opencl.render.elementwise import lift

    lift(ctx, op, lambda p, v: f"atomic_xchg({p}, {v})")


@triton.jit
def exchange_then_load(p_ptr, x_ptr, old_ptr, seen_ptr, before_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    before = tl.load(p_ptr + offs)  # read before the exchange: must see the old values
    old = exchange(p_ptr + offs, tl.load(x_ptr + offs))
    # read after it: must see the new ones. Volatile: Triton's own TTIR CSE merges a plain load of the same
    # address across any non-pure extern call or inline asm (their effects name no memory resource; the CUDA path
    # alike), so the kernel states that memory may have changed
    seen = tl.load(p_ptr + offs, volatile=True)
    tl.store(old_ptr + offs, old)
    tl.store(seen_ptr + offs, seen)
    tl.store(before_ptr + offs, before)


@triton.jit
def exchange_unused(p_ptr, x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    exchange(p_ptr + offs, tl.load(x_ptr + offs) * 2)


@pytest.mark.parametrize("backend", ["cpu_ref", "opencl", "opencl@wg128"], indirect=True)
def test_an_op_with_effects_runs_once_in_program_order(backend, rng):
    n, block = 8 * 64, 64
    p = torch.randn(n, generator=rng)
    x = torch.randn(n, generator=rng)
    start = p.clone()
    old, seen, before = torch.empty(n), torch.empty(n), torch.empty(n)
    k = exchange_then_load[(n // block,)](p, x, old, seen, before, BLOCK=block)
    assert torch.equal(old, start) and torch.equal(before, start), (
        "the exchange returns, and earlier reads see, the old"
    )
    assert torch.equal(seen, x) and torch.equal(p, x), "the later read and memory see the exchanged values"
    ops = [o for o in parse_ttir(k.asm["sdkir"]).walk() if isinstance(o, exchange.op)]
    assert len(ops) == 1 and str(ops[0].operands[0].type) == "tensor<64x!tt.ptr<f32>>", "a pointer operand in SDK IR"


@pytest.mark.parametrize("backend", ["cpu_ref", "opencl", "opencl@wg128"], indirect=True)
def test_an_op_with_effects_runs_when_its_result_is_unused(backend, rng):
    n, block = 4 * 32, 32
    p, x = torch.zeros(n), torch.randn(n, generator=rng)
    exchange_unused[(n // block,)](p, x, BLOCK=block)
    assert torch.equal(p, x * 2)


@triton.jit
def exchange_scalar(p_ptr, v):
    exchange(p_ptr + tl.program_id(0), v)


@pytest.mark.parametrize("backend", ["cpu_ref", "opencl", "opencl@wg128"], indirect=True)
def test_a_scalar_op_with_effects_runs_once_per_program_or_is_refused(backend):
    p = torch.zeros(5)
    if backend == "opencl" and p.numel() and _work_items() > 1:
        with pytest.raises(Exception, match=r"tsdkfx\.exchange has effects and scalar operands: every one of"):
            exchange_scalar[(5,)](p, 2.5)
        return
    exchange_scalar[(5,)](p, 2.5)
    assert p.tolist() == [2.5] * 5


def _work_items() -> int:
    import os

    return int(os.environ.get("TRITON_OPENCL_WORK_ITEMS") or 1)


def test_pointer_arguments_are_checked_when_the_kernel_is_compiled(rng):
    @triton.jit
    def wrong_pointee(p_ptr, x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        exchange(p_ptr + offs, tl.load(x_ptr + offs))

    import triton_backend_sdk

    triton_backend_sdk.use("cpu_ref")
    with pytest.raises(Exception, match=r"tsdkfx\.exchange.*argument 0 must be a pointer to fp32"):
        wrong_pointee[(1,)](torch.zeros(8, dtype=torch.int32), torch.zeros(8), BLOCK=8)


@pytest.mark.parametrize(
    ("signatures", "message"),
    [
        ({("*fp32",): "*fp32"}, "results cannot be pointers"),
        ({("*fp32", "fp32"): "fp32", ("fp32", "*fp32"): "fp32"}, "same positions"),
    ],
)
def test_pointer_signature_errors(signatures, message):
    with pytest.raises(ValueError, match=message):
        custom_op("tsdkfx.bad", signatures, pure=False)
