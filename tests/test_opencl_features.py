"""The opencl backend's features beyond OpenCL C 1.2's built-ins, run on this machine's OpenCL device: 8/16-bit
atomics (every rmw kind and compare-and-swap, neighbouring elements of one 32-bit word updated concurrently),
fp16/bf16 atomic add bit-identical to torch, on both memory paths (zero-copy and the copy path of discrete devices).
Skipped with the reason when no OpenCL device exists."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from conftest import _unavailable

pytestmark = pytest.mark.skipif(bool(_unavailable("opencl")), reason=str(_unavailable("opencl")))
#: tests that compare with cpu_ref's output need cpu_ref (the GPU machine's staged install has only opencl)
needs_cpu_ref = pytest.mark.skipif(
    bool(_unavailable("cpu_ref")), reason=f"compares with cpu_ref: {_unavailable('cpu_ref')}"
)


@pytest.fixture(params=[True, False], ids=["zero_copy", "copy"])
def memory_path(request, ocl, monkeypatch):
    """Runs the test on the zero-copy path (where the device has it) and on the copy path of discrete devices."""
    from triton_backend_sdk.backends.opencl.runtime import runtime_for, selected_device

    rt = runtime_for(selected_device())
    if request.param and not rt.zero_copy:
        pytest.skip("this device does not share host memory")
    monkeypatch.setattr(rt, "zero_copy", request.param)
    return request.param


# ---- 8/16-bit integer atomics: Triton's frontend refuses them, so the kernel is TTIR ---------------------------------

SLOTS = 8


def _rmw_ttir(ty: str, op: str, n: int) -> str:
    t, pt = f"tensor<{n}x{ty}>", f"tensor<{n}x!tt.ptr<{ty}>>"
    return f"""module {{
  tt.func public @rmw(%x: !tt.ptr<{ty}>, %acc: !tt.ptr<{ty}>, %old: !tt.ptr<{ty}>) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %c = arith.constant dense<{SLOTS - 1}> : tensor<{n}xi32>
    %s = arith.andi %r, %c : tensor<{n}xi32>
    %px = tt.splat %x : !tt.ptr<{ty}> -> {pt}
    %qx = tt.addptr %px, %r : {pt}, tensor<{n}xi32>
    %v = tt.load %qx : {pt}
    %pa = tt.splat %acc : !tt.ptr<{ty}> -> {pt}
    %qa = tt.addptr %pa, %s : {pt}, tensor<{n}xi32>
    %o = tt.atomic_rmw {op}, acq_rel, gpu, %qa, %v : ({pt}, {t}) -> {t}
    %po = tt.splat %old : !tt.ptr<{ty}> -> {pt}
    %qo = tt.addptr %po, %r : {pt}, tensor<{n}xi32>
    tt.store %qo, %o : {pt}
    tt.return
  }}
}}
"""


def _compile_ttir(text: str, tmp_path) -> triton.compiler.CompiledKernel:
    path = tmp_path / "k.ttir"
    path.write_text(text)
    return triton.compile(str(path), target=triton_backend_sdk.target("opencl"))


_NP_OPS = {
    "add": lambda a, b: a + b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "max": np.maximum,
    "min": np.minimum,
    "umax": np.maximum,
    "umin": np.minimum,
}


@pytest.mark.parametrize("ty", ["i8", "i16"])
@pytest.mark.parametrize("op", ["add", "and", "or", "xor", "exch", "max", "min", "umax", "umin"])
def test_subword_integer_atomics(memory_path, tmp_path, ty, op):
    """Eight neighbouring slots (two or four per 32-bit word) each updated by many work-items at once: the final
    values are order-independent, and with one update per slot the old values are the initial ones."""
    g = torch.Generator().manual_seed(7)
    dt = {"i8": torch.int8, "i16": torch.int16}[ty]
    info = torch.iinfo(dt)
    for n in (128, SLOTS):
        k = _compile_ttir(_rmw_ttir(ty, op, n), tmp_path)
        x = torch.randint(info.min, info.max + 1, (n,), generator=g, dtype=torch.int64).to(dt)
        init = torch.randint(info.min, info.max + 1, (SLOTS,), generator=g, dtype=torch.int64).to(dt)
        acc, old = init.clone(), torch.zeros(n, dtype=dt)
        k[(1, 1, 1)](x, acc, old)
        unsigned = op in ("umax", "umin")
        view = (lambda a: a.numpy().view(np.uint8 if ty == "i8" else np.uint16)) if unsigned else (lambda a: a.numpy())
        want = view(init).copy()
        with np.errstate(over="ignore"):
            for i, v in enumerate(view(x)):
                want[i % SLOTS] = (
                    v if op == "exch" and n == SLOTS else _NP_OPS.get(op, lambda a, b: b)(want[i % SLOTS], v)
                )
        if op != "exch" or n == SLOTS:
            assert np.array_equal(view(acc), want), (n, view(acc), want)
        else:  # exchanges: each slot ends holding one of the values exchanged into it
            assert all(int(acc[s]) in x[s::SLOTS].tolist() for s in range(SLOTS))
        if n == SLOTS:
            assert torch.equal(old, init)


@triton.jit
def half_add_kernel(acc_ptr, x_ptr, old_ptr, n, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_add(acc_ptr + offs % SLOTS, tl.load(x_ptr + offs, mask=m), mask=m)
    tl.store(old_ptr + offs, old, mask=m)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_atomic_add_rounds_like_torch_and_returns_old(memory_path, dtype):
    """One add per address (neighbours in the same word at once): the sum is torch's correctly rounded half sum,
    bit for bit (subnormals, ties and overflow to inf included); the old value comes back."""
    g = torch.Generator().manual_seed(11)
    n = 1000
    a = (torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 17, (n,), generator=g).float())).to(dtype)
    b = (torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 17, (n,), generator=g).float())).to(dtype)
    acc, old = a.clone(), torch.empty_like(a)
    half_add_kernel[(triton.cdiv(n, 256),)](acc, b, old, n, SLOTS=1 << 30, BLOCK=256)
    assert torch.equal(acc.view(torch.int16), (a + b).view(torch.int16))
    assert torch.equal(old.view(torch.int16), a.view(torch.int16))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_atomic_add_under_contention(memory_path, dtype):
    """256 adds of 1 per slot from 4 programs: every partial sum is exact in both formats, so the result and the
    set of old values each slot returned are order-independent."""
    x = torch.ones(1024, dtype=dtype)
    acc, old = torch.zeros(4, dtype=dtype), torch.empty_like(x)
    half_add_kernel[(4,)](acc, x, old, 1024, SLOTS=4, BLOCK=256)
    assert acc.tolist() == [256.0] * 4
    for s in range(4):
        assert sorted(old[s::4].tolist()) == [float(i) for i in range(256)]


@triton.jit
def cas16_kernel(p_ptr, cmp_ptr, val_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(p_ptr + offs, tl.load(cmp_ptr + offs), tl.load(val_ptr + offs))
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("dtype", [torch.int16, torch.float16, torch.bfloat16])
def test_16bit_compare_and_swap(memory_path, dtype):
    """Even elements compare equal and are swapped, odd ones do not and keep their value; every one returns the
    old value; neighbours sharing a word are all updated at once."""
    g = torch.Generator().manual_seed(3)
    n = 256
    cur = torch.randint(-100, 100, (n,), generator=g).to(dtype)  # cur + 1 != cur in every format
    cmp = torch.where(torch.arange(n) % 2 == 0, cur, cur + 1)
    val = torch.randint(-1000, 1000, (n,), generator=g).to(dtype)
    p, old = cur.clone(), torch.empty_like(cur)
    cas16_kernel[(1,)](p, cmp, val, old, BLOCK=n)
    assert torch.equal(old, cur)
    assert torch.equal(p, torch.where(torch.arange(n) % 2 == 0, val, cur))


# ---- device_print and device_assert --------------------------------------------------------------------------------


@triton.jit
def print_types_kernel(f_ptr, h_ptr, b_ptr, i8_ptr, u64_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    offs = tl.program_id(0) * BLOCK_M * BLOCK_N + rows * BLOCK_N + cols
    f = tl.load(f_ptr + offs)
    tl.device_print("f ", f)
    tl.device_print("h ", tl.load(h_ptr + offs), hex=True)
    tl.device_print("bf", tl.load(b_ptr + offs))
    tl.device_print("i8 ", tl.load(i8_ptr + offs), hex=True)
    u = tl.load(u64_ptr + offs)
    tl.device_print("u64 ", u)
    tl.device_print("two ", f > 0, u)
    tl.device_print("scalar % ", tl.max(f))
    tl.device_print("nothing")


def _print_lines(backend: str, capfd) -> list[str]:
    from triton.runtime import driver

    previous = driver.active
    triton_backend_sdk.use(backend)
    try:
        g = torch.Generator().manual_seed(5)
        n = 2 * 8
        f = torch.randn(n, generator=g)
        u = torch.randint(-(1 << 62), 1 << 62, (n,), generator=g, dtype=torch.int64).to(torch.uint64)
        i8 = torch.randint(-128, 128, (n,), generator=g, dtype=torch.int8)
        capfd.readouterr()
        print_types_kernel[(2,)](f, f.half(), f.bfloat16(), i8, u, BLOCK_M=2, BLOCK_N=4)
        return capfd.readouterr().out.splitlines()
    finally:
        driver.set_active(previous)


@needs_cpu_ref
def test_device_print_matches_cpu_ref_line_for_line(ocl, capfd):
    """Every dtype's formatting (floats, hex of fp16 bits, bf16, i8 hex, u64, several operands, 2-D indices, a
    scalar, no operand, a '%' in the prefix) is cpu_ref's; each program's lines come in cpu_ref's order."""
    got, want = _print_lines("opencl", capfd), _print_lines("cpu_ref", capfd)
    assert len(got) == len(want) == 2 * (6 * 8 + 1 + 1 + 8), (len(got), len(want))
    for pid in range(2):
        mine = [ln for ln in got if ln.startswith(f"pid ({pid}, 0, 0)")]
        ref = [ln for ln in want if ln.startswith(f"pid ({pid}, 0, 0)")]
        assert mine == ref


@triton.jit
def assert_then_reduce_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "x >= 0")
    tl.store(out_ptr + tl.program_id(0), tl.sum(x))  # a reduction (barriers) after the assert


def test_device_assert_on_both_memory_paths(memory_path):
    """The failing program stops as a whole (no work-item left at a barrier), the others finish and their results
    arrive; the next launch of the same kernel starts clean."""
    x = torch.arange(4 * 256, dtype=torch.float32)
    x[2 * 256 + 100] = -1.0
    out = torch.full((4,), -7.0)
    with pytest.raises(
        AssertionError,
        match=r"test_opencl_features\.py:\d+:\d+: assert_then_reduce_kernel: "
        r"program \(2, 0, 0\): Assertion `x >= 0` failed",
    ):
        assert_then_reduce_kernel[(4,)](x, out, BLOCK=256, debug=True)
    want = x.view(4, 256).sum(1)
    assert out[2].item() == -7.0 and torch.equal(out[[0, 1, 3]], want[[0, 1, 3]])
    x[2 * 256 + 100] = 1.0
    assert_then_reduce_kernel[(4,)](x, out, BLOCK=256, debug=True)
    assert torch.equal(out, x.view(4, 256).sum(1))


@triton.jit
def print_pointers_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("p ", x_ptr + tl.arange(0, BLOCK))
    tl.device_print("ph ", x_ptr, hex=True)


def test_device_print_of_pointers(ocl, capfd):
    """Pointers print as addresses the way cpu_ref's `%p` does (a pointer tile goes through local memory as
    integers); consecutive elements are 4 bytes apart."""
    print_pointers_kernel[(1,)](torch.zeros(4), BLOCK=4)
    out = capfd.readouterr().out.splitlines()
    assert len(out) == 5 and all(re.fullmatch(r"pid \(0, 0, 0\) idx \(\d\) p: 0x[0-9a-f]+", ln) for ln in out[:4])
    addr = [int(ln.rsplit(" ", 1)[1], 16) for ln in out[:4]]
    assert [a - addr[0] for a in addr] == [0, 4, 8, 12]
    assert re.fullmatch(r"pid \(0, 0, 0\) idx \(\) ph: 0x[0-9a-f]{16}", out[4])


# ---- fnuz fp8 (AMD-only in Triton's frontend, so the kernel is TTIR) and rtz fp8: bit for bit with cpu_ref ----------


def _fp8_roundtrip_ttir(src: str, f8: str, n: int, rounding: str) -> str:
    t = lambda e: f"tensor<{n}x{e}>"
    pt = lambda e: f"tensor<{n}x!tt.ptr<{e}>>"
    return f"""module {{
  tt.func public @roundtrip(%x: !tt.ptr<{src}>, %bits: !tt.ptr<i8>, %back: !tt.ptr<{src}>) {{
    %r = tt.make_range {{end = {n} : i32, start = 0 : i32}} : {t("i32")}
    %c = arith.constant {n} : i32
    %pid = tt.get_program_id x : i32
    %base = arith.muli %pid, %c : i32
    %b = tt.splat %base : i32 -> {t("i32")}
    %o = arith.addi %r, %b : {t("i32")}
    %px = tt.splat %x : !tt.ptr<{src}> -> {pt(src)}
    %qx = tt.addptr %px, %o : {pt(src)}, {t("i32")}
    %v = tt.load %qx : {pt(src)}
    %f = tt.fp_to_fp %v, rounding = {rounding} : {t(src)} -> {t(f8)}
    %i = tt.bitcast %f : {t(f8)} -> {t("i8")}
    %pb = tt.splat %bits : !tt.ptr<i8> -> {pt("i8")}
    %qb = tt.addptr %pb, %o : {pt("i8")}, {t("i32")}
    tt.store %qb, %i : {pt("i8")}
    %w = tt.fp_to_fp %f : {t(f8)} -> {t(src)}
    %pk = tt.splat %back : !tt.ptr<{src}> -> {pt(src)}
    %qk = tt.addptr %pk, %o : {pt(src)}, {t("i32")}
    tt.store %qk, %w : {pt(src)}
    tt.return
  }}
}}
"""


@pytest.mark.parametrize(
    "f8,rounding",
    [("f8E4M3FNUZ", "rtne"), ("f8E5M2FNUZ", "rtne")]
    + [(f, "rtz") for f in ("f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3FN", "f8E5M2")],
)
@pytest.mark.parametrize("src", ["f32", "f16", "bf16", "f64"])
@needs_cpu_ref
def test_fp8_conversions_match_cpu_ref_bit_for_bit(ocl, tmp_path, f8, rounding, src):
    """fnuz fp8 (nearest even) and every fp8 format rounded toward zero: every magnitude from subnormal to
    overflow (saturating at the largest finite value), ties, signed zeros, infinities and NaN: the fp8 bytes are
    cpu_ref's, and so are the values converted back."""
    from triton.runtime import driver
    from triton_backend_sdk.backends.opencl.runtime import features_of, selected_device

    if src == "f64" and "cl_khr_fp64" not in features_of(selected_device()):
        pytest.skip("the device has no fp64")
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}[src]
    g = torch.Generator().manual_seed(17)
    n, grid = 1024, 16
    x = torch.randn(n * grid, generator=g, dtype=torch.float64)
    x *= torch.exp2(torch.randint(-24, 20, (n * grid,), generator=g).double())
    special = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-30, -1e-30, 240, 241, 248, 250, -57344, 6e4]
    x[: len(special)] = torch.tensor(special, dtype=torch.float64)
    j = torch.arange(256, dtype=torch.int32)  # ties: midpoints between neighbouring e4m3 / e5m2 values
    mid = 1 + (2 * (j % 8) + 1).double() / (16 if f8.startswith("f8E4M3") else 8)
    x[len(special) : len(special) + 256] = mid * torch.exp2((j // 8 - 16).double()) * (1 - 2 * (j % 2)).double()
    x = x.to(dt)
    path = tmp_path / "k.ttir"
    path.write_text(_fp8_roundtrip_ttir(src, f8, n, rounding))
    outs = []
    previous = driver.active
    try:
        for be in ("cpu_ref", "opencl"):
            triton_backend_sdk.use(be)
            k = triton.compile(str(path), target=triton_backend_sdk.target(be))
            bits, back = torch.zeros(n * grid, dtype=torch.int8), torch.zeros_like(x)
            k[(grid, 1, 1)](x, bits, back)
            outs.append((bits, back))
    finally:
        driver.set_active(previous)
    (b_ref, v_ref), (b, v) = outs
    assert torch.equal(b, b_ref)  # NaN bytes too: both backends encode through sdk/numerics_fp8.py
    same = (v.double() == v_ref.double()) & (torch.signbit(v) == torch.signbit(v_ref))
    assert bool((same | (v.isnan() & v_ref.isnan())).all())
