"""Regressions from Triton's upstream language suite (issue 12) on every backend: AMD's fnuz fp8 types (fp8e4b8,
fp8e5b16) compile and convert bit for bit with torch's float8_e4m3fnuz / float8_e5m2fnuz, and a num_warps that is
not a power of 2 is refused with the error type Triton's own backends raise (AssertionError)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

_FNUZ = {"fp8e4b8": (tl.float8e4b8, torch.float8_e4m3fnuz), "fp8e5b16": (tl.float8e5b16, torch.float8_e5m2fnuz)}


@triton.jit
def _round_trip(x_ptr, bits_ptr, back_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    f8 = tl.load(x_ptr + offs, mask=mask).to(FP8, fp_downcast_rounding="rtne")
    tl.store(bits_ptr + offs, f8.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(back_ptr + offs, f8.to(tl.float32), mask=mask)


@triton.jit
def _widen(bits_ptr, out_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(bits_ptr + offs, mask=mask).to(FP8, bitcast=True).to(tl.float32), mask=mask)


@pytest.mark.parametrize("name", list(_FNUZ))
def test_fnuz_fp8_widens_every_code_like_torch(backend, name):
    tl_ty, torch_ty = _FNUZ[name]
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    out = torch.empty(256, dtype=torch.float32)
    _widen[(1,)](codes, out, 256, FP8=tl_ty, BLOCK=256)
    want = codes.view(torch_ty).float()
    assert torch.isnan(out[0x80]) and torch.isnan(want[0x80])
    keep = torch.arange(256) != 0x80
    assert torch.equal(out[keep].view(torch.int32), want[keep].view(torch.int32))


@pytest.mark.parametrize("name", list(_FNUZ))
def test_fnuz_fp8_rounds_like_torch(backend, name, rng):
    """Random f32 values inside the format's finite range (beyond it torch gives NaN, the SDK saturates like PTX),
    the format's own code points and every midpoint between neighbours (ties to even), a ragged size."""
    tl_ty, torch_ty = _FNUZ[name]
    top = torch.finfo(torch_ty).max
    finite = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch_ty).float()
    finite = finite[finite.isfinite()].unique()
    mids = (finite[1:] + finite[:-1]) / 2
    rand = (torch.rand(3001, generator=rng) * 2 - 1) * top
    tiny = (torch.rand(500, generator=rng) * 2 - 1) * float(finite[finite > 0].min()) * 4
    x = torch.cat([rand, tiny, finite, mids, -mids]).float()
    n = x.numel()
    bits, back = torch.empty(n, dtype=torch.uint8), torch.empty(n, dtype=torch.float32)
    _round_trip[(triton.cdiv(n, 512),)](x, bits, back, n, FP8=tl_ty, BLOCK=512)
    want = x.to(torch_ty)
    bad = (bits != want.view(torch.uint8)).nonzero().flatten().tolist()
    assert not bad, f"{len(bad)} of {n} differ, first {x[bad[0]].item()!r}: {bits[bad[0]]:#04x} vs torch"
    assert torch.equal(back.view(torch.int32), want.float().view(torch.int32))


def test_num_warps_not_a_power_of_2_is_an_assertion_error(backend):
    @triton.jit
    def _noop(dst):
        pass

    dst = torch.empty(16)
    with pytest.raises(AssertionError, match="must be a power of 2"):
        _noop.warmup(dst=dst, grid=(1,), num_warps=3)
    for w in (1, 2, 4):
        _noop.warmup(dst=dst, grid=(1,), num_warps=w)


def test_while_attributes_read_with_aliases_expanded_and_print_back():
    """MLIR prints scf.while's attributes after `attributes` (attr-dict-with-keyword); Triton puts its
    `disable_licm` annotation there, through two aliases."""
    from triton_backend_sdk.ir.attrs import OpaqueAttr
    from triton_backend_sdk.ir.printer import print_module
    from triton_backend_sdk.ir.reader import parse_ttir

    text = """#loop_licm = #llvm.loop_licm<disable = true, versioningDisable = true>
#loop_annotation = #llvm.loop_annotation<licm = #loop_licm>
module {
  tt.func public @k(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.while (%i = %c0) : (i32) -> i32 {
      %p = arith.cmpi slt, %i, %n : i32
      scf.condition(%p) %i : i32
    } do {
    ^bb0(%j: i32):
      %k = arith.addi %j, %c1 : i32
      scf.yield %k : i32
    } attributes {llvm.loop_annotation = #loop_annotation}
    tt.return
  }
}
"""
    want = OpaqueAttr("#llvm.loop_annotation<licm = #llvm.loop_licm<disable = true, versioningDisable = true>>")
    for _ in range(2):
        m = parse_ttir(text)
        (loop,) = [o for o in m.walk() if o.op_name == "scf.while"]
        assert loop.attrs["llvm.loop_annotation"] == want
        text = print_module(m)
        assert "} attributes {llvm.loop_annotation = #llvm.loop_annotation<" in text


@triton.jit
def _sum_twice(x_ptr, out_ptr, n, NO_LICM: tl.constexpr):
    i = 0
    acc = 0
    while tl.condition(i < n, disable_licm=NO_LICM):
        acc += tl.load(x_ptr + i) * n
        i += 1
    for j in tl.range(0, n, disable_licm=NO_LICM):
        acc += tl.load(x_ptr + j)
    tl.store(out_ptr, acc)


@pytest.mark.parametrize("no_licm", [True, False])
def test_disable_licm_loops_run_and_reach_llvm(backend, no_licm, rng):
    """Annotated loops compute what plain ones do; on cpu_ref the back edges carry `llvm.licm.disable` only when
    asked (Triton's test_disable_licm reads the LLVM IR)."""
    n = int(torch.randint(3, 40, (1,), generator=rng))
    x = torch.randint(-1000, 1000, (n,), generator=rng, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    k = _sum_twice[(1,)](x, out, n, NO_LICM=no_licm)
    assert int(out) == int(x.sum()) * (n + 1)
    if backend == "cpu_ref":
        assert ("llvm.licm.disable" in k.asm["llir"]) == no_licm


@triton.jit
def _ticket(counter_ptr, out_ptr, x_ptr):
    pid = tl.program_id(0)
    old = tl.atomic_add(counter_ptr, tl.load(x_ptr + pid))
    tl.store(out_ptr + pid, old)


@pytest.mark.parametrize("work_items", [1, 4])
def test_scalar_atomic_result_shared_only_between_work_items(backend, work_items, rng):
    """A scalar atomic whose old value is used: each program's addend is applied once and the old values are the
    prefix sums in some order. On opencl a one-work-item group keeps the value private (no local memory, as
    Triton's test_atomic_poll_no_timeout_uses_no_shared_memory asks); a larger group shares it through local memory."""
    if work_items != 1 and not backend.startswith("opencl"):
        pytest.skip("work_items is an opencl launch keyword")
    n = 37
    x = torch.randint(1, 1000, (n,), generator=rng, dtype=torch.int32)
    counter, out = torch.zeros(1, dtype=torch.int32), torch.full((n,), -1, dtype=torch.int32)
    extra = {"work_items": work_items} if backend.startswith("opencl") else {}
    k = _ticket[(n,)](counter, out, x, **extra)
    assert int(counter) == int(x.sum())
    order = torch.argsort(out)
    assert torch.equal(out[order][1:], torch.cumsum(x[order], 0)[:-1].to(torch.int32)) and int(out.min()) == 0
    assert (k.metadata.shared == 0) == (work_items == 1)


@triton.jit
def _assumed(x_ptr, out_ptr, n, ASSUME: tl.constexpr, BLOCK: tl.constexpr):
    rest = n - tl.program_id(0) * BLOCK
    if ASSUME:
        tl.assume(rest >= BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(rest >= BLOCK, x * 2, x - 1))


def test_assume_holds_and_reaches_llvm(backend, rng):
    """`tl.assume` (upstream test_assume): results as without it; on cpu_ref LLVM gets it (`llvm.assume`) and
    uses it: the branch it rules out (`x - 1`) is folded away."""
    n, block = 640, 128
    x = torch.randn(n, generator=rng)
    for assume in (False, True):
        out = torch.empty_like(x)
        k = _assumed[(n // block,)](x, out, n, ASSUME=assume, BLOCK=block)
        torch.testing.assert_close(out, x * 2)
        if backend == "cpu_ref":
            assert ("fsub" in k.asm["llir"] or "fadd" in k.asm["llir"]) != assume, k.asm["llir"][-3000:]
