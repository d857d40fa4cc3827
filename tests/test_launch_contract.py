"""One launch contract on every SDK backend: the same grid, argument-count, scalar-range and tensor-dtype checks,
with the same messages, for JIT launches and for kernels compiled ahead of time (`triton.compile(...)[grid](...)`),
and the values that pass the checks reach the kernel unchanged.

Before the contract lived in the SDK, opencl silently ran nothing on a negative grid, raised `std::bad_cast` on a
float grid, `IndexError` on too few AOT arguments, ran with an extra one, and both backends read an fp16 tensor
through a kernel compiled for `*fp32` (garbage, and past the buffer's end).
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk._native as native
from triton.compiler import ASTSource
from triton_backend_sdk.launch import make_native_launcher, pointer_contract


@triton.jit
def _axpb(out, x, a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * a + b, mask=m)


@triton.jit
def _scalars(out, u32, u64, i8, flag, h, bh):
    tl.store(out + 0, u32.to(tl.float64))
    tl.store(out + 1, u64.to(tl.float64))
    tl.store(out + 2, i8.to(tl.float64))
    tl.store(out + 3, flag.to(tl.float64))
    tl.store(out + 4, h.to(tl.float64))
    tl.store(out + 5, bh.to(tl.float64))


AXPB_SIG = {"out": "*fp32", "x": "*fp32", "a": "fp32", "b": "i32", "n": "i32", "BLOCK": "constexpr"}
SCALAR_SIG = {"out": "*fp64", "u32": "u32", "u64": "u64", "i8": "i8", "flag": "i1", "h": "fp16", "bh": "bf16"}


def _compiled(fn, signature: dict, constexprs: dict):
    """The kernel compiled ahead of time for the active driver (the `backend` fixture's)."""
    return triton.compile(ASTSource(fn, signature=signature, constexprs=constexprs))


@pytest.fixture
def axpb(backend):
    return _compiled(_axpb, AXPB_SIG, {"BLOCK": 32})


@pytest.mark.parametrize("n", [1, 31, 32, 100])
def test_aot_launch_matches_torch(axpb, rng, n):
    x = torch.randn(n, generator=rng)
    out = torch.full((n,), float("nan"))
    axpb[(triton.cdiv(n, 32), 1, 1)](out, x, 1.5, -3, n, 32)  # constexprs are passed too, as on CUDA
    torch.testing.assert_close(out, x * 1.5 - 3)


CALL_ERRORS = [
    ("negative grid", (-1, 1, 1), {}, ValueError, r"^Launcher: gridX must be >= 0, got -1$"),
    ("negative gridZ", (1, 1, -2), {}, ValueError, r"^Launcher: gridZ must be >= 0, got -2$"),
    ("float grid", (1.0, 1, 1), {}, TypeError, r"^Launcher: gridX must be an integer, got float 1.0$"),
    ("huge grid", (2**64, 1, 1), {}, ValueError, r"^Launcher: gridX must be < 2\*\*31, got 18446744073709551616$"),
    ("i32 range", (1, 1, 1), {"n": 2**31}, TypeError, r"^argument 'n' \(#4\): value 2147483648 is out of range"),
    ("float for i32", (1, 1, 1), {"b": 1.5}, TypeError, r"^argument 'b' \(#3\): expected an integer for i32"),
    ("str for fp32", (1, 1, 1), {"a": "1.5"}, TypeError, r"^argument 'a' \(#2\): expected a float for fp32"),
    ("None tensor", (1, 1, 1), {"x": None}, TypeError, r"^argument 'x' \(#1\): expected a CPU tensor"),
    (
        "fp16 tensor for *fp32",
        (1, 1, 1),
        {"x": torch.ones(4, dtype=torch.float16)},
        TypeError,
        (
            r"^argument 'x' \(#1\): expected a torch.float32 tensor \(the kernel was compiled for \*fp32\), got "
            r"torch.float16; .* or compile the kernel for \*fp16$"
        ),
    ),
    (
        "int32 tensor for *fp32",
        (1, 1, 1),
        {"out": torch.zeros(4, dtype=torch.int32)},
        TypeError,
        r"^argument 'out' \(#0\): expected a torch.float32 tensor .* got torch.int32",
    ),
]


@pytest.mark.parametrize("grid,overrides,exc,message", [c[1:] for c in CALL_ERRORS], ids=[c[0] for c in CALL_ERRORS])
def test_aot_call_errors_are_the_same_on_every_backend(axpb, grid, overrides, exc, message):
    args = {"out": torch.zeros(4), "x": torch.ones(4), "a": 2.0, "b": 1, "n": 4, "BLOCK": 32}
    args.update(overrides)
    out = args["out"]
    before = out.clone()
    with pytest.raises(exc, match=message):
        axpb[grid](*args.values())
    assert torch.equal(out, before), "a refused launch must not run"


@pytest.mark.parametrize("count", [5, 7])
def test_aot_argument_count(axpb, count):
    """An AOT launch passes every parameter, constexprs included (Triton's launcher convention)."""
    args = [torch.zeros(4), torch.ones(4), 2.0, 1, 4, 32, 0][:count]
    message = r"^Launcher: expected 6 kernel arguments \(out, x, a, b, n, BLOCK\), got " + str(count)
    with pytest.raises(TypeError, match=message):
        axpb[(1, 1, 1)](*args)


def test_reinterpret_view_is_accepted(axpb):
    """A `triton.reinterpret` view of the right element type passes (its dtype is a Triton dtype, not torch's)."""
    x = torch.arange(4, dtype=torch.float32)
    out = torch.zeros(4)
    axpb[(1, 1, 1)](out, triton.reinterpret(x.view(torch.int32), tl.float32), 2.0, 1, 4, 32)
    torch.testing.assert_close(out, x * 2 + 1)


SCALAR_VALUES = [
    (2**32 - 1, 2**64 - 1, -128, True, 1.0 + 2**-10, 1.0 + 2**-7),
    (0, 2**63, 127, False, -65504.0, -(2.0**100)),
    (123456789, 1, -1, True, 2**-24, 2**-133),
]


@pytest.mark.parametrize("values", SCALAR_VALUES, ids=[str(i) for i in range(len(SCALAR_VALUES))])
def test_scalars_reach_the_kernel_unchanged(backend, values):
    """Unsigned ranges come from the signature (u32 2**32-1, u64 2**64-1 are valid, not refused as signed), fp16/bf16
    scalars are rounded once to nearest even on every backend, i1 is 0/1."""
    fn = _compiled(_scalars, SCALAR_SIG, {})
    out = torch.full((6,), float("nan"), dtype=torch.float64)
    fn[(1, 1, 1)](out, *values)
    u32, u64, i8, flag, h, bh = values
    want = [
        float(u32),
        float(u64),
        float(i8),
        float(flag),
        torch.tensor(h, dtype=torch.float16).double().item(),
        torch.tensor(bh, dtype=torch.bfloat16).double().item(),
    ]
    assert out.tolist() == want


@pytest.mark.parametrize(
    "index,value,message",
    [
        (0, -1, r"^argument 'u32' \(#1\): value -1 is out of range for u32 \[0, 4294967295\]$"),
        (0, 2**32, r"^argument 'u32' \(#1\): value 4294967296 is out of range for u32"),
        (1, -1, r"^argument 'u64' \(#2\): value -1 is out of range for u64"),
        (2, 128, r"^argument 'i8' \(#3\): value 128 is out of range for i8 \[-128, 127\]$"),
        (3, 2, r"^argument 'flag' \(#4\): value 2 is out of range for i1 \[0, 1\]$"),
    ],
)
def test_scalar_ranges_come_from_the_signature(backend, index, value, message):
    fn = _compiled(_scalars, SCALAR_SIG, {})
    args = list(SCALAR_VALUES[2])
    args[index] = value
    with pytest.raises(TypeError, match=message):
        fn[(1, 1, 1)](torch.zeros(6, dtype=torch.float64), *args)


def test_jit_negative_grid(backend):
    out = torch.zeros(4)
    with pytest.raises(ValueError, match=r"^Launcher: gridX must be >= 0, got -1$"):
        _axpb[(-1,)](out, torch.ones(4), 1.0, 1, 4, BLOCK=32)
    assert torch.equal(out, torch.zeros(4))


def test_pack_checks_without_running():
    """`Launcher.pack` is the contract alone: the same errors as a launch, and the 8-byte slots the kernel gets."""
    launcher = make_native_launcher(["p", "n", "x", "C"], ["*fp32", "u32", "fp16", "constexpr"], "opencl")
    t = torch.zeros(3)
    gx, gy, gz, slots = launcher.pack(2, 3, 1, None, 0, None, None, None, None, t, 2**32 - 1, 0.1, 7)
    assert (gx, gy, gz) == (2, 3, 1)
    assert int.from_bytes(slots[0:8], "little") == t.data_ptr()
    assert int.from_bytes(slots[8:16], "little") == 2**32 - 1
    assert int.from_bytes(slots[16:24], "little") == native._fp16_bits(0.1)
    with pytest.raises(TypeError, match=r"^argument 'p' \(#0\): expected a torch.float32 tensor"):
        launcher.pack(1, 1, 1, None, 0, None, None, None, None, t.double(), 1, 0.1, 7)
    with pytest.raises(ValueError, match="gridY must be >= 0"):
        launcher.pack(1, -1, 1, None, 0, None, None, None, None, t, 1, 0.1, 7)


def test_pointer_contract_types():
    expected, check = pointer_contract(["*fp32", "*kbf16", "*i1", "*fp8e4b15", "i32", "*u8"])
    assert expected == [torch.float32, torch.bfloat16, torch.bool, None, None, torch.uint8]
    assert check(0, torch.zeros(1, dtype=torch.float32)) is None
    assert "compile the kernel for *i8" in check(5, torch.zeros(1, dtype=torch.int8))
