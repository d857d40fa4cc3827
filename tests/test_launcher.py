"""Tests for the static launcher ``triton_backend_sdk._native``.

Test kernels are hand-written LLVM IR implementing the launcher ABI

    void entry(void **args, int32_t gx, int32_t gy, int32_t gz, int64_t start, int64_t end);

JIT-compiled with llvmlite, and called through ``Launcher`` with Triton's launcher calling convention.
"""

from __future__ import annotations

import ctypes
import math
import os
import random
import struct
import threading

import llvmlite.binding as llvm
import numpy as np
import pytest
import torch
import triton_backend_sdk._native as native

K = native  # KIND_* constants live on the module

# ---------------------------------------------------------------------------
# LLVM IR kernels
# ---------------------------------------------------------------------------

ENTRY = "define void @{name}(ptr %args, i32 %gx, i32 %gy, i32 %gz, i64 %start, i64 %end)"

# Each program `lin` writes (pid_x, pid_y, pid_z, lin) into row `lin` of an int64 [total, 5] tensor and
# atomically increments column 4 of that row (the run count).
GRID_RECORD = (
    ENTRY.format(name="grid_record")
    + """ {
entry:
  %p0 = load ptr, ptr %args
  %out = load ptr, ptr %p0
  %gx64 = sext i32 %gx to i64
  %gy64 = sext i32 %gy to i64
  %gxy = mul i64 %gx64, %gy64
  %empty = icmp sge i64 %start, %end
  br i1 %empty, label %exit, label %loop
loop:
  %lin = phi i64 [ %start, %entry ], [ %next, %loop ]
  %px = srem i64 %lin, %gx64
  %q = sdiv i64 %lin, %gx64
  %py = srem i64 %q, %gy64
  %pz = sdiv i64 %lin, %gxy
  %base = mul i64 %lin, 5
  %a0 = getelementptr i64, ptr %out, i64 %base
  store i64 %px, ptr %a0
  %a1 = getelementptr i64, ptr %a0, i64 1
  store i64 %py, ptr %a1
  %a2 = getelementptr i64, ptr %a0, i64 2
  store i64 %pz, ptr %a2
  %a3 = getelementptr i64, ptr %a0, i64 3
  store i64 %lin, ptr %a3
  %a4 = getelementptr i64, ptr %a0, i64 4
  %old = atomicrmw add ptr %a4, i64 1 monotonic
  %next = add i64 %lin, 1
  %done = icmp eq i64 %next, %end
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""
)

# Runtime args: x (f32*), y (f32*), out (f32*), a (f32), b (i32), n (i32). Program `lin` handles elements
# [lin * 16, lin * 16 + 16) below n: out = x * a + y + (float)b.
BLOCK = 16
AXPB = (
    ENTRY.format(name="axpb")
    + """ {
entry:
  %px = load ptr, ptr %args
  %x = load ptr, ptr %px
  %s1 = getelementptr ptr, ptr %args, i64 1
  %py = load ptr, ptr %s1
  %y = load ptr, ptr %py
  %s2 = getelementptr ptr, ptr %args, i64 2
  %po = load ptr, ptr %s2
  %o = load ptr, ptr %po
  %s3 = getelementptr ptr, ptr %args, i64 3
  %pa = load ptr, ptr %s3
  %a = load float, ptr %pa
  %s4 = getelementptr ptr, ptr %args, i64 4
  %pb = load ptr, ptr %s4
  %b = load i32, ptr %pb
  %bf = sitofp i32 %b to float
  %s5 = getelementptr ptr, ptr %args, i64 5
  %pn = load ptr, ptr %s5
  %n32 = load i32, ptr %pn
  %n = sext i32 %n32 to i64
  %lo = mul i64 %start, 16
  %hi0 = mul i64 %end, 16
  %cut = icmp slt i64 %n, %hi0
  %hi = select i1 %cut, i64 %n, i64 %hi0
  %empty = icmp sge i64 %lo, %hi
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ %lo, %entry ], [ %next, %loop ]
  %xa = getelementptr float, ptr %x, i64 %i
  %xv = load float, ptr %xa
  %ya = getelementptr float, ptr %y, i64 %i
  %yv = load float, ptr %ya
  %m = fmul float %xv, %a
  %s = fadd float %m, %yv
  %r = fadd float %s, %bf
  %oa = getelementptr float, ptr %o, i64 %i
  store float %r, ptr %oa
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %hi
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""
)

# kind -> (LLVM type, torch dtype of the output, torch dtype to read the bits back as)
SCALAR_TYPES = {
    K.KIND_I1: ("i8", torch.int8),
    K.KIND_I8: ("i8", torch.int8),
    K.KIND_I16: ("i16", torch.int16),
    K.KIND_I32: ("i32", torch.int32),
    K.KIND_I64: ("i64", torch.int64),
    K.KIND_U8: ("i8", torch.uint8),
    K.KIND_U16: ("i16", torch.int16),
    K.KIND_U32: ("i32", torch.int32),
    K.KIND_U64: ("i64", torch.int64),
    K.KIND_FP16: ("half", torch.float16),
    K.KIND_BF16: ("bfloat", torch.bfloat16),
    K.KIND_FP32: ("float", torch.float32),
    K.KIND_FP64: ("double", torch.float64),
}


def copy_scalar_ir(kind: int) -> str:
    """args[0]: out pointer; args[1]: a scalar of `kind`, stored typed into out[0]."""
    ty = SCALAR_TYPES[kind][0]
    return (
        ENTRY.format(name=f"copy_{kind}")
        + f""" {{
  %po = load ptr, ptr %args
  %o = load ptr, ptr %po
  %s1 = getelementptr ptr, ptr %args, i64 1
  %pv = load ptr, ptr %s1
  %v = load {ty}, ptr %pv
  store {ty} %v, ptr %o
  ret void
}}
"""
    )


def copy_slots_ir(name: str, nslots: int) -> str:
    """args[0]: int64 out pointer; out[j - 1] = the raw 8-byte slot of args[j] for j in 1..nslots."""
    lines = [ENTRY.format(name=name) + " {", "  %po = load ptr, ptr %args", "  %o = load ptr, ptr %po"]
    for j in range(1, nslots + 1):
        lines += [
            f"  %s{j} = getelementptr ptr, ptr %args, i64 {j}",
            f"  %p{j} = load ptr, ptr %s{j}",
            f"  %v{j} = load i64, ptr %p{j}",
            f"  %d{j} = getelementptr i64, ptr %o, i64 {j - 1}",
            f"  store i64 %v{j}, ptr %d{j}",
        ]
    lines += ["  ret void", "}", ""]
    return "\n".join(lines)


N_MANY = 70  # more runtime arguments than the launcher keeps on its stack


class Kernels:
    def __init__(self):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.tm = llvm.Target.from_default_triple().create_target_machine(opt=2)
        self.lljit = llvm.create_lljit_compiler(self.tm)
        sources = [GRID_RECORD, AXPB, copy_slots_ir("copy_slots8", 8), copy_slots_ir("copy_slots_many", N_MANY)]
        sources += [copy_scalar_ir(kind) for kind in SCALAR_TYPES]
        mod = llvm.parse_assembly("\n".join(sources))
        mod.verify()
        builder = llvm.JITLibraryBuilder().add_object_img(self.tm.emit_object(mod))
        names = ["grid_record", "axpb", "copy_slots8", "copy_slots_many"] + [f"copy_{k}" for k in SCALAR_TYPES]
        for name in names:
            builder.export_symbol(name)
        self.tracker = builder.link(self.lljit, "test_launcher_kernels")
        self.addr = {name: self.tracker[name] for name in names}

    def __getitem__(self, name: str) -> int:
        return self.addr[name]


@pytest.fixture(scope="module")
def kernels() -> Kernels:
    return Kernels()


@pytest.fixture(autouse=True)
def restore_threads():
    before = native.get_num_threads()
    yield
    native.set_num_threads(before)


def launch(launcher, grid, function, *args, metadata=None, enter=None, exit=None):
    """Calls `launcher` exactly the way Triton's CompiledKernel.run does."""
    grid = tuple(grid) + (1,) * (3 - len(grid))
    launcher(grid[0], grid[1], grid[2], 0, function, (4, 1, 0), metadata, enter, exit, *args)


GRID_LAUNCHER_KINDS = ([K.KIND_PTR], ["out_ptr"])


def run_grid_record(kernels, grid):
    total = math.prod(grid)
    out = torch.full((max(total, 1), 5), -1, dtype=torch.int64)
    out[:, 4] = 0
    launch(native.Launcher(*GRID_LAUNCHER_KINDS), grid, kernels["grid_record"], out)
    return out


def check_grid(out, grid):
    gx, gy, gz = grid
    lin = torch.arange(gx * gy * gz, dtype=torch.int64)
    expected = torch.stack([lin % gx, (lin // gx) % gy, lin // (gx * gy), lin, torch.ones_like(lin)], dim=1)
    assert torch.equal(out, expected)


# ---------------------------------------------------------------------------
# Module surface
# ---------------------------------------------------------------------------


def test_kind_constants():
    expected = {
        "skip": 0, "ptr": 1, "i1": 2, "i8": 3, "i16": 4, "i32": 5, "i64": 6, "u8": 7,
        "u16": 8, "u32": 9, "u64": 10, "fp16": 11, "bf16": 12, "fp32": 13, "fp64": 14,
    }  # fmt: skip
    assert native.kinds == expected
    for name, value in expected.items():
        assert getattr(native, f"KIND_{name.upper()}") == value


def test_launcher_properties():
    launcher = native.Launcher([K.KIND_PTR, K.KIND_SKIP, K.KIND_I32], ["x_ptr", "BLOCK", "n"])
    assert launcher.kinds == [K.KIND_PTR, K.KIND_SKIP, K.KIND_I32]
    assert launcher.names == ["x_ptr", "BLOCK", "n"]
    assert launcher.num_runtime_args == 2
    assert launcher.backend == "cpu_ref"
    assert "x_ptr: ptr" in repr(launcher) and "BLOCK: skip" in repr(launcher)


def test_launcher_constructor_errors():
    with pytest.raises(ValueError, match="2 kinds but 1 names"):
        native.Launcher([K.KIND_PTR, K.KIND_I32], ["x"])
    with pytest.raises(ValueError, match="'n' .#1.: unknown kind 99"):
        native.Launcher([K.KIND_PTR, 99], ["x", "n"])


def test_num_threads():
    assert native.default_num_threads() == len(os.sched_getaffinity(0))
    native.set_num_threads(3)
    assert native.get_num_threads() == 3
    native.set_num_threads(1)
    assert native.get_num_threads() == 1
    for bad in (0, -2):
        with pytest.raises(ValueError, match="must be >= 1"):
            native.set_num_threads(bad)
    assert native.get_num_threads() == 1


# ---------------------------------------------------------------------------
# Grids
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 5])
@pytest.mark.parametrize(
    "grid", [(1, 1, 1), (2, 1, 1), (7, 1, 1), (1000, 1, 1), (20011, 1, 1), (3, 5, 7), (1, 9, 1), (1, 1, 13), (17, 3, 2)]
)
def test_grid_every_program_runs_once(kernels, grid, threads):
    native.set_num_threads(threads)
    check_grid(run_grid_record(kernels, grid), grid)


def test_grid_defaults_to_one_for_missing_dims(kernels):
    out = torch.zeros((11, 5), dtype=torch.int64)
    launch(native.Launcher(*GRID_LAUNCHER_KINDS), (11,), kernels["grid_record"], out)
    check_grid(out, (11, 1, 1))


@pytest.mark.parametrize("grid", [(0, 1, 1), (4, 0, 1), (4, 3, 0), (0, 0, 0)])
def test_zero_grid_runs_nothing(kernels, grid):
    out = torch.full((4, 5), -1, dtype=torch.int64)
    calls = []
    launcher = native.Launcher(*GRID_LAUNCHER_KINDS)
    launch(launcher, grid, kernels["grid_record"], out, metadata="m", enter=calls.append, exit=calls.append)
    assert torch.all(out == -1)
    assert calls == ["m", "m"]  # hooks still see the launch, as on Triton's GPU backends
    # With nothing to run, the function address is not needed.
    launch(launcher, grid, 0, out)


@pytest.mark.parametrize("grid", [(-1, 1, 1), (1, -3, 1), (1, 1, -1)])
def test_negative_grid_is_a_value_error(kernels, grid):
    out = torch.zeros((1, 5), dtype=torch.int64)
    with pytest.raises(ValueError, match=r"grid[XYZ] must be >= 0"):
        launch(native.Launcher(*GRID_LAUNCHER_KINDS), grid, kernels["grid_record"], out)


def test_grid_dim_too_large(kernels):
    with pytest.raises(ValueError, match=r"gridX must be < 2\*\*31"):
        launch(native.Launcher(*GRID_LAUNCHER_KINDS), (2**31, 1, 1), kernels["grid_record"], 0)


def test_null_function_is_rejected():
    out = torch.zeros((1, 5), dtype=torch.int64)
    with pytest.raises(ValueError, match="function address is 0"):
        launch(native.Launcher(*GRID_LAUNCHER_KINDS), (1, 1, 1), 0, out)


def test_grid_dims_accept_index_objects(kernels):
    out = torch.zeros((6, 5), dtype=torch.int64)
    launch(native.Launcher(*GRID_LAUNCHER_KINDS), (np.int64(2), np.int32(3), 1), kernels["grid_record"], out)
    check_grid(out, (2, 3, 1))


# ---------------------------------------------------------------------------
# A realistic kernel with constexprs (SKIP) between runtime arguments
# ---------------------------------------------------------------------------

AXPB_KINDS = [K.KIND_PTR, K.KIND_SKIP, K.KIND_PTR, K.KIND_PTR, K.KIND_FP32, K.KIND_SKIP, K.KIND_I32, K.KIND_I32]
AXPB_NAMES = ["x_ptr", "BLOCK_SIZE", "y_ptr", "out_ptr", "a", "DTYPE", "b", "n"]


def run_axpb(kernels, x, y, a, b, grid=None):
    n = x.numel()
    out = torch.full_like(x, float("nan"))
    if grid is None:
        grid = (math.ceil(n / BLOCK), 1, 1)
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    launch(launcher, grid, kernels["axpb"], x, BLOCK, y, out, a, "ignored constexpr", b, n)
    return out


@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000, 4097, 100_003])
def test_axpb_matches_torch(kernels, n):
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(n, generator=gen)
    y = torch.randn(n, generator=gen)
    a = float(np.float32(torch.randn(1, generator=gen).item()))
    b = int(torch.randint(-100, 100, (1,), generator=gen))
    out = run_axpb(kernels, x, y, a, b)
    expected = (x * a + y) + float(b)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_axpb_3d_grid(kernels):
    # 5 * 4 * 3 = 60 programs of 16 covering 950 elements (the last programs see nothing).
    n = 950
    x = torch.randn(n)
    y = torch.randn(n)
    out = run_axpb(kernels, x, y, 0.5, 3, grid=(5, 4, 3))
    torch.testing.assert_close(out, (x * 0.5 + y) + 3.0, rtol=0, atol=0)


@pytest.mark.parametrize("n", [33, 5000, 65_537])
def test_threads_one_vs_many_identical(kernels, n):
    x = torch.randn(n)
    y = torch.randn(n)
    results = []
    for threads in (1, 2, 4, 16):
        native.set_num_threads(threads)
        results.append(run_axpb(kernels, x, y, -1.25, 7))
    for r in results[1:]:
        assert torch.equal(r.view(torch.int32), results[0].view(torch.int32))


def test_skip_arguments_are_not_inspected(kernels):
    # A constexpr slot may hold anything, even objects that would fail every conversion.
    x = torch.randn(40)
    y = torch.randn(40)
    out = torch.empty(40)
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    launch(launcher, (3,), kernels["axpb"], x, object(), y, out, 2.0, None, 1, 40)
    torch.testing.assert_close(out, (x * 2.0 + y) + 1.0, rtol=0, atol=0)


def test_integer_addresses_for_pointers(kernels):
    n = 77
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    launch(launcher, (5,), kernels["axpb"], x.data_ptr(), 0, y.data_ptr(), out.data_ptr(), 1.5, 0, -2, n)
    torch.testing.assert_close(out, (x * 1.5 + y) - 2.0, rtol=0, atol=0)


def test_tensor_like_objects_without_is_cpu(kernels):
    class Buffer:
        def __init__(self, t, device):
            self.t = t
            self.device = device

        def data_ptr(self):
            return self.t.data_ptr()

    class Device:
        type = "cpu"

        def __str__(self):
            return "cpu"

    n = 20
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    launch(launcher, (2,), kernels["axpb"], Buffer(x, Device()), 0, Buffer(y, "cpu"), out, 1.0, 0, 0, n)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


# ---------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------


def run_copy(kernels, kind, value):
    dtype = SCALAR_TYPES[kind][1]
    out = torch.zeros(1, dtype=dtype)
    launch(native.Launcher([K.KIND_PTR, kind], ["out_ptr", "value"]), (1,), kernels[f"copy_{kind}"], out, value)
    return out


INT_CASES = {
    K.KIND_I1: (0, 1),
    K.KIND_I8: (-128, 127),
    K.KIND_I16: (-(2**15), 2**15 - 1),
    K.KIND_I32: (-(2**31), 2**31 - 1),
    K.KIND_I64: (-(2**63), 2**63 - 1),
    K.KIND_U8: (0, 2**8 - 1),
    K.KIND_U16: (0, 2**16 - 1),
    K.KIND_U32: (0, 2**32 - 1),
    K.KIND_U64: (0, 2**64 - 1),
}
KIND_NAME = {v: k for k, v in native.kinds.items()}


def as_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


@pytest.mark.parametrize("kind", list(INT_CASES), ids=lambda k: KIND_NAME[k])
def test_integer_scalars_round_trip(kernels, kind):
    lo, hi = INT_CASES[kind]
    rng = random.Random(kind)
    values = [lo, hi, 0, 1, (lo + hi) // 2] + [rng.randint(lo, hi) for _ in range(20)]
    bits = SCALAR_TYPES[kind][1].itemsize * 8
    for v in values:
        got = int(run_copy(kernels, kind, v).item())
        expected = v if kind == K.KIND_U8 else as_signed(v, bits)
        assert got == expected, (v, got)


def test_bool_and_index_objects_for_integers(kernels):
    assert run_copy(kernels, K.KIND_I1, True).item() == 1
    assert run_copy(kernels, K.KIND_I1, False).item() == 0
    assert run_copy(kernels, K.KIND_I32, True).item() == 1
    assert run_copy(kernels, K.KIND_I32, np.int16(-300)).item() == -300
    assert run_copy(kernels, K.KIND_U64, np.uint64(2**64 - 2)).item() == -2
    assert run_copy(kernels, K.KIND_I64, torch.tensor(2**40)).item() == 2**40


def fp16_bits_reference(values: np.ndarray) -> np.ndarray:
    """numpy converts float64 -> float16 directly, with round to nearest even."""
    with np.errstate(over="ignore"):
        return values.astype(np.float16).view(np.uint16)


def bf16_bits_reference(value: float) -> int:
    """Exact double -> bf16 with round to nearest even (for normal bf16 results)."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", value))
    drop = 52 - 7
    keep, rem = bits >> drop, bits & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    if rem > half or (rem == half and keep & 1):
        keep += 1
    rounded = struct.unpack("<d", struct.pack("<Q", keep << drop))[0]
    return int(torch.tensor([rounded], dtype=torch.float64).to(torch.float32).view(torch.int32).item()) >> 16 & 0xFFFF


FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 65504.0, 65519.0, 65520.0, -1e6, 1e-8, 6e-8, 2**-24, 2**-25,
                  3 * 2**-26, 2**-14, 3.0e38, 3.4e38, 1e39, -1e39, 1e-40, 1e-46, 1e300, 5e-324,
                  float("inf"), float("-inf")]  # fmt: skip


@pytest.mark.parametrize("kind", [K.KIND_FP16, K.KIND_BF16, K.KIND_FP32, K.KIND_FP64], ids=lambda k: KIND_NAME[k])
def test_float_scalars_match_torch_conversion(kernels, kind):
    """Every float32-representable value converts exactly like torch's float32 -> fp16/bf16/fp32/fp64."""
    dtype = SCALAR_TYPES[kind][1]
    gen = torch.Generator().manual_seed(kind)
    scales = torch.exp2(torch.randint(-30, 30, (200,), generator=gen).float())
    values = (torch.randn(200, generator=gen) * scales).tolist() + FLOAT_SPECIALS
    with np.errstate(over="ignore"):
        values = [float(np.float32(v)) for v in values]  # float32-representable (overflow -> inf)
    int_view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]
    for v in values:
        got = run_copy(kernels, kind, v).view(int_view).item()
        expected = torch.tensor([v], dtype=torch.float32).to(dtype).view(int_view).item()
        assert got == expected, (v, hex(got), hex(expected))


def test_fp16_from_double_rounds_once(kernels):
    rng = np.random.default_rng(1)
    values = rng.standard_normal(300) * np.exp2(rng.integers(-28, 18, 300))
    values = np.concatenate([values, np.array([v for v in FLOAT_SPECIALS if not math.isnan(v)])])
    # 1 + 2**-11 + 2**-40 rounds up in one step; rounding through float32 first would tie and round down.
    values = np.concatenate([values, [1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40)]])
    expected = fp16_bits_reference(values)
    for v, e in zip(values.tolist(), expected.tolist()):
        got = run_copy(kernels, K.KIND_FP16, v).view(torch.int16).item() & 0xFFFF
        assert got == e, (v, hex(got), hex(e))
    assert native._fp16_bits(1 + 2**-11 + 2**-40) == 0x3C01


def test_bf16_from_double_rounds_once(kernels):
    rng = np.random.default_rng(2)
    values = (rng.standard_normal(300) * np.exp2(rng.integers(-100, 100, 300))).tolist()
    values += [1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-8, 1 + 3 * 2**-8]
    for v in values:
        got = run_copy(kernels, K.KIND_BF16, v).view(torch.int16).item() & 0xFFFF
        assert got == bf16_bits_reference(v), (v, hex(got))
    assert native._bf16_bits(1 + 2**-8 + 2**-30) == 0x3F81  # float32 first would give the tie 0x3F80


@pytest.mark.parametrize("kind", [K.KIND_FP16, K.KIND_BF16, K.KIND_FP32, K.KIND_FP64], ids=lambda k: KIND_NAME[k])
def test_float_nan(kernels, kind):
    out = run_copy(kernels, kind, float("nan"))
    assert math.isnan(out.float().item())


def test_float_kinds_accept_ints_and_float_like(kernels):
    assert run_copy(kernels, K.KIND_FP32, 3).item() == 3.0
    assert run_copy(kernels, K.KIND_FP64, True).item() == 1.0
    assert run_copy(kernels, K.KIND_FP32, np.float32(0.25)).item() == 0.25
    assert run_copy(kernels, K.KIND_FP64, np.float64(-2.5)).item() == -2.5
    assert run_copy(kernels, K.KIND_FP16, 2**20).view(torch.int16).item() == 0x7C00  # overflow -> inf


def test_slots_are_eight_bytes_zero_filled(kernels):
    """args[i] points to its own 8-byte slot; narrower values sit at its start, the rest is zero."""
    kinds = [K.KIND_PTR, K.KIND_I8, K.KIND_SKIP, K.KIND_U16, K.KIND_I32, K.KIND_FP16, K.KIND_BF16, K.KIND_FP32,
             K.KIND_FP64, K.KIND_I1]  # fmt: skip
    names = ["out", "a", "C", "b", "c", "d", "e", "f", "g", "h"]
    out = torch.full((8,), -1, dtype=torch.int64)
    launcher = native.Launcher(kinds, names)
    launch(launcher, (1,), kernels["copy_slots8"], out, -2, "constexpr", 65535, -7, 1.5, -2.0, 0.1, 0.1, True)
    expected = [
        0xFE,
        0xFFFF,
        0xFFFFFFF9,
        0x3E00,
        0xC000,
        struct.unpack("<I", struct.pack("<f", 0.1))[0],
        struct.unpack("<q", struct.pack("<d", 0.1))[0],
        1,
    ]
    assert out.tolist() == expected


def test_many_arguments_use_heap_slots(kernels):
    kinds = [K.KIND_PTR] + [K.KIND_I64, K.KIND_SKIP] * N_MANY
    names = ["out"] + [n for j in range(N_MANY) for n in (f"v{j}", f"C{j}")]
    assert N_MANY > native.MAX_INLINE_ARGS
    values = [int(v) for v in np.random.default_rng(3).integers(-(2**62), 2**62, N_MANY)]
    args = [a for v in values for a in (v, None)]
    out = torch.zeros(N_MANY, dtype=torch.int64)
    native.set_num_threads(4)
    launch(native.Launcher(kinds, names), (3, 2), kernels["copy_slots_many"], out, *args)
    assert out.tolist() == values


# ---------------------------------------------------------------------------
# Errors: TypeError naming the argument and its position
# ---------------------------------------------------------------------------


class FakeCudaTensor:
    is_cpu = False
    device = "cuda:0"

    def data_ptr(self):
        return 0x1000


class FakeDevice:
    type = "cuda"

    def __str__(self):
        return "cuda:1"


class FakeCudaNoIsCpu:
    device = FakeDevice()

    def data_ptr(self):
        return 0x1000


def axpb_call(kernels, **overrides):
    x = torch.randn(4)
    args = {
        "x_ptr": x,
        "BLOCK_SIZE": 16,
        "y_ptr": x,
        "out_ptr": torch.empty(4),
        "a": 1.0,
        "DTYPE": None,
        "b": 0,
        "n": 4,
    }
    args.update(overrides)
    launch(native.Launcher(AXPB_KINDS, AXPB_NAMES), (1,), kernels["axpb"], *args.values())


TYPE_ERRORS = [
    (
        {"x_ptr": None},
        r"^argument 'x_ptr' \(#0\): expected a CPU tensor or an integer address for a pointer, got None$",
    ),
    ({"y_ptr": FakeCudaTensor()}, r"^argument 'y_ptr' \(#2\): tensor is on device 'cuda:0'; the cpu_ref backend runs"),
    ({"out_ptr": FakeCudaNoIsCpu()}, r"^argument 'out_ptr' \(#3\): tensor is on device 'cuda:1'"),
    ({"x_ptr": 1.5}, r"^argument 'x_ptr' \(#0\): expected a CPU tensor .* got float 1.5$"),
    ({"x_ptr": "abc"}, r"^argument 'x_ptr' \(#0\): expected a CPU tensor .* got str 'abc'$"),
    ({"x_ptr": object()}, r"^argument 'x_ptr' \(#0\): expected a CPU tensor .* got an object of type 'object'$"),
    ({"x_ptr": True}, r"^argument 'x_ptr' \(#0\): expected a CPU tensor .* got bool True$"),
    ({"x_ptr": -1}, r"^argument 'x_ptr' \(#0\): pointer address -1 is not in \[0, 2\*\*64\)$"),
    ({"a": "1.0"}, r"^argument 'a' \(#4\): expected a float for fp32, got str '1.0'$"),
    ({"a": None}, r"^argument 'a' \(#4\): expected a float for fp32, got None$"),
    ({"a": 10**400}, r"^argument 'a' \(#4\): integer 1000.* is too large to convert to fp32$"),
    ({"b": 1.0}, r"^argument 'b' \(#6\): expected an integer for i32, got float 1.0$"),
    ({"b": None}, r"^argument 'b' \(#6\): expected an integer for i32, got None$"),
    ({"n": "4"}, r"^argument 'n' \(#7\): expected an integer for i32, got str '4'$"),
    ({"n": 2**31}, r"^argument 'n' \(#7\): value 2147483648 is out of range for i32 \[-2147483648, 2147483647\]$"),
    ({"n": -(2**31) - 1}, r"^argument 'n' \(#7\): value -2147483649 is out of range for i32"),
    ({"n": 10**30}, r"^argument 'n' \(#7\): value 10{30} is out of range for i32"),
]


@pytest.mark.parametrize("overrides,message", TYPE_ERRORS, ids=[str(i) for i in range(len(TYPE_ERRORS))])
def test_type_errors_name_the_argument(kernels, overrides, message):
    with pytest.raises(TypeError, match=message):
        axpb_call(kernels, **overrides)


@pytest.mark.parametrize(
    "kind,value,message",
    [
        (K.KIND_I1, 2, r"value 2 is out of range for i1 \[0, 1\]"),
        (K.KIND_I8, 128, r"value 128 is out of range for i8 \[-128, 127\]"),
        (K.KIND_I8, -129, r"value .* is out of range for i8"),
        (K.KIND_I16, 2**15, r"value .* is out of range for i16 \[-32768, 32767\]"),
        (K.KIND_I64, 2**63, r"value .* is out of range for i64 \[-9223372036854775808, 9223372036854775807\]"),
        (K.KIND_U8, -1, r"value -1 is out of range for u8 \[0, 255\]"),
        (K.KIND_U8, 256, r"value .* is out of range for u8 \[0, 255\]"),
        (K.KIND_U16, 2**16, r"value .* is out of range for u16 \[0, 65535\]"),
        (K.KIND_U32, 2**32, r"value .* is out of range for u32 \[0, 4294967295\]"),
        (K.KIND_U64, 2**64, r"value .* is out of range for u64 \[0, 18446744073709551615\]"),
        (K.KIND_U64, -(2**70), r"value .* is out of range for u64"),
        (K.KIND_I1, 0.0, r"expected an integer for i1, got float 0.0"),
        (K.KIND_U64, np.float64(3.0), r"expected an integer for u64, got an object of type 'numpy.float64'"),
        (K.KIND_FP16, object(), r"expected a float for fp16, got an object of type 'object'"),
        (K.KIND_BF16, b"x", r"expected a float for bf16, got bytes b'x'"),
    ],
)
def test_scalar_type_errors(kernels, kind, value, message):
    with pytest.raises(TypeError, match=r"^argument 'value' \(#1\): " + message):
        run_copy(kernels, kind, value)


def test_wrong_argument_count(kernels):
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    x = torch.randn(4)
    with pytest.raises(TypeError, match=r"expected 8 kernel arguments \(x_ptr, BLOCK_SIZE, y_ptr, .*, n\), got 7"):
        launch(launcher, (1,), kernels["axpb"], x, 16, x, x, 1.0, None, 0)
    with pytest.raises(TypeError, match=r"expected 8 kernel arguments .*, got 9"):
        launch(launcher, (1,), kernels["axpb"], x, 16, x, x, 1.0, None, 0, 4, 5)
    with pytest.raises(TypeError, match=r"Launcher expects \(gridX, gridY, gridZ, stream, function"):
        launcher(1, 1, 1)


def test_errors_leave_no_partial_launch(kernels):
    """A conversion error is raised before the enter hook and before any program runs."""
    calls = []
    out = torch.full((4,), -5.0)
    launcher = native.Launcher(AXPB_KINDS, AXPB_NAMES)
    x = torch.randn(4)
    with pytest.raises(TypeError, match="'n'"):
        launch(launcher, (1,), kernels["axpb"], x, 16, x, out, 1.0, None, 0, "4", enter=calls.append, exit=calls.append)
    assert calls == []
    assert torch.all(out == -5.0)


def test_custom_backend_name_in_device_error(kernels):
    launcher = native.Launcher([K.KIND_PTR], ["buf"], backend="my_backend")
    with pytest.raises(
        TypeError, match=r"^argument 'buf' \(#0\): tensor is on device 'cuda:0'; the my_backend backend"
    ):
        launch(launcher, (1,), kernels["grid_record"], FakeCudaTensor())


# ---------------------------------------------------------------------------
# Hooks
# ---------------------------------------------------------------------------


def test_hooks_called_around_the_launch(kernels):
    out = torch.zeros((6, 5), dtype=torch.int64)
    events = []
    metadata = {"name": "grid_record"}

    def enter(md):
        events.append(("enter", md, int(out[:, 4].sum())))

    def exit(md):
        events.append(("exit", md, int(out[:, 4].sum())))

    native.set_num_threads(2)
    launch(native.Launcher(*GRID_LAUNCHER_KINDS), (6,), kernels["grid_record"], out, metadata=metadata,
           enter=enter, exit=exit)  # fmt: skip
    assert events == [("enter", metadata, 0), ("exit", metadata, 6)]
    assert events[0][1] is metadata


def test_only_one_hook(kernels):
    out = torch.zeros((1, 5), dtype=torch.int64)
    seen = []
    launch(native.Launcher(*GRID_LAUNCHER_KINDS), (1,), kernels["grid_record"], out, metadata=7, exit=seen.append)
    assert seen == [7]


def test_enter_hook_exception_propagates_and_skips_launch(kernels):
    out = torch.zeros((3, 5), dtype=torch.int64)

    def boom(md):
        raise RuntimeError("hook failed")

    with pytest.raises(RuntimeError, match="hook failed"):
        launch(native.Launcher(*GRID_LAUNCHER_KINDS), (3,), kernels["grid_record"], out, enter=boom)
    assert int(out.sum()) == 0


def test_exit_hook_exception_propagates(kernels):
    out = torch.zeros((3, 5), dtype=torch.int64)

    def boom(md):
        raise KeyError("exit")

    with pytest.raises(KeyError):
        launch(native.Launcher(*GRID_LAUNCHER_KINDS), (3,), kernels["grid_record"], out, exit=boom)
    check_grid(out, (3, 1, 1))


# ---------------------------------------------------------------------------
# Concurrency and fork
# ---------------------------------------------------------------------------


def test_concurrent_launches_from_python_threads(kernels):
    native.set_num_threads(3)
    errors = []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(30):
                grid = tuple(int(v) for v in rng.integers(1, 12, 3))
                check_grid(run_grid_record(kernels, grid), grid)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_changing_thread_count_between_launches(kernels):
    for threads in (4, 2, 7, 1, 3, 3, 2):
        native.set_num_threads(threads)
        check_grid(run_grid_record(kernels, (9, 5, 2)), (9, 5, 2))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:.*multi-threaded.*fork:DeprecationWarning")
def test_fork_after_pool_creation(kernels):
    native.set_num_threads(4)
    check_grid(run_grid_record(kernels, (64, 1, 1)), (64, 1, 1))  # the pool now exists
    total = 257
    pid = os.fork()
    if pid == 0:  # child: avoid torch (its own thread pool); use a ctypes buffer and a raw address
        status = 1
        try:
            buf = (ctypes.c_int64 * (total * 5))()
            launcher = native.Launcher(*GRID_LAUNCHER_KINDS)
            launcher(total, 1, 1, 0, kernels["grid_record"], None, None, None, None, ctypes.addressof(buf))
            rows = [buf[i * 5 : i * 5 + 5] for i in range(total)]
            status = 0 if all(r == [i, 0, 0, i, 1] for i, r in enumerate(rows)) else 2
        finally:
            os._exit(status)
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0
    check_grid(run_grid_record(kernels, (64, 1, 1)), (64, 1, 1))  # the parent's pool still works
