"""Golden LLVM IR for cpu_ref's rule families added for the whole language: atomics, fp8 and rounding conversions,
libdevice/extern calls, gather/histogram, print, assert, cf branches, barriers. Small TTIR in, the expected
(unoptimised) LLVM IR lines out, in order: each expected line must be a substring of some later output line,
whitespace runs collapsed (SSA names are left out)."""

from __future__ import annotations

import pytest
from golden_ir import GOLDEN_TARGET, check_lines, lower
from triton_backend_sdk.errors import UnsupportedError

RANGE16 = """
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %v = tt.load %q : tensor<16x!tt.ptr<f32>>"""


@pytest.mark.parametrize("op,llvm", [("fadd", "atomicrmw fadd ptr"), ("exch", "atomicrmw xchg ptr")])
def test_atomic_rmw_is_one_atomicrmw_per_masked_element(op, llvm):
    ir = lower(
        RANGE16
        + f"""
    %s = tt.splat %n : i32 -> tensor<16xi32>
    %m = arith.cmpi slt, %r, %s : tensor<16xi32>
    %o = tt.atomic_rmw {op}, acq_rel, gpu, %q, %v, %m : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>"""
    )
    check_lines(
        ir,
        f"""
        br i1
        {llvm}
        phi float
    """,
    )
    assert all(line.rstrip().endswith("acq_rel") for line in ir.splitlines() if "atomicrmw" in line)


def test_integer_atomic_max_and_relaxed_order():
    ir = lower("""
    %c = arith.constant 3 : i32
    %t = arith.constant true
    %i = tt.bitcast %x : !tt.ptr<f32> -> !tt.ptr<i32>
    %o = tt.atomic_rmw umin, relaxed, gpu, %i, %c, %t : (!tt.ptr<i32>, i32, i1) -> i32""")
    check_lines(ir, """atomicrmw umin ptr""")
    assert next(line for line in ir.splitlines() if "atomicrmw" in line).rstrip().endswith("monotonic")


def test_atomic_cas_on_floats_compares_bits():
    ir = lower("""
    %a = arith.constant 0.000000e+00 : f32
    %b = arith.constant 1.000000e+00 : f32
    %o = tt.atomic_cas acq_rel, gpu, %x, %a, %b : (!tt.ptr<f32>, f32, f32) -> f32""")
    check_lines(
        ir,
        """
        bitcast float 0x0 to i32
        bitcast float 0x3ff0000000000000 to i32
        cmpxchg ptr
        extractvalue {i32, i1}
        bitcast i32
    """,
    )
    assert next(line for line in ir.splitlines() if "cmpxchg" in line).rstrip().endswith("acq_rel acquire")


def test_fp8_widening_reads_a_table_and_narrowing_rounds_even():
    """The SDK's fp8 rounding in i32 instructions, branch-free: saturate at 448.0 (0x43e00000), shift by a variable
    amount (subnormals), add half an ulp minus one plus the kept lsb, NaN to 0x7f with its sign."""
    ir = lower(
        RANGE16
        + """
    %f = tt.fp_to_fp %v, rounding = rtne : tensor<16xf32> -> tensor<16xf8E4M3FN>
    %g = tt.fp_to_fp %f : tensor<16xf8E4M3FN> -> tensor<16xf32>
    tt.store %q, %g : tensor<16x!tt.ptr<f32>>"""
    )
    assert "fp8.decode.e4m3b7" in ir
    check_lines(
        ir,
        """
        icmp ugt i32
        , 1138753536
        i32 1138753536, i32
        lshr i32 2147483647
        , 127
        icmp ugt i32
        , 2139095040
        trunc i32
        getelementptr float, ptr @"fp8.decode.e4m3b7"
    """,
    )
    assert "fdiv" not in ir and "llvm.roundeven" not in ir


def test_fp8_rtz_truncates():
    """Toward zero: the shifted significand is not rounded (no half-ulp add before the variable shift)."""
    ir = lower(
        RANGE16
        + """
    %f = tt.fp_to_fp %v, rounding = rtz : tensor<16xf32> -> tensor<16xf8E5M2>
    %g = tt.fp_to_fp %f : tensor<16xf8E5M2> -> tensor<16xf32>
    tt.store %q, %g : tensor<16x!tt.ptr<f32>>"""
    )
    check_lines(ir, ", 1197473792")  # saturation at 57344.0
    assert "lshr i32 2147483647" not in ir


def test_f64_to_f16_rounds_to_odd_first():
    ir = lower("""
    %d = arith.sitofp %n : i32 to f64
    %h = arith.truncf %d : f64 to f16""")
    check_lines(
        ir,
        """
        fptrunc double
        fpext float
        or i32
        fptrunc float
    """,
    )
    assert "fptrunc double" in ir and "to half" not in ir.split("fptrunc double")[1].splitlines()[0]


def test_libdevice_maps_to_libm_and_intrinsics():
    """After the SDK's math-library pass: libdevice calls are SDK ops (atan → libm's atanf), expansions (isnan →
    fcmp uno) and C math functions (`libm.hypot` → hypotf)."""
    from triton_backend_sdk.backends.cpu_ref.codegen import RULES, lower_module
    from triton_backend_sdk.ir import parse_ttir
    from triton_backend_sdk.options import Options
    from triton_backend_sdk.pipeline import PassContext
    from triton_backend_sdk.transforms.math_library import MathLibrary

    body = (
        RANGE16
        + """
    %t = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__nv_atanf"} : (tensor<16xf32>) -> tensor<16xf32>
    %h = tt.extern_elementwise %t, %v {libname = "", libpath = "", pure = true, symbol = "__nv_hypotf"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %i = tt.extern_elementwise %h {libname = "", libpath = "", pure = true, symbol = "__nv_isnanf"} : (tensor<16xf32>) -> tensor<16xi32>
    %c = tt.extern_elementwise %i {libname = "", libpath = "", pure = true, symbol = "__nv_popc"} : (tensor<16xi32>) -> tensor<16xi32>
    %f = arith.sitofp %c : tensor<16xi32> to tensor<16xf32>
    tt.store %q, %f : tensor<16x!tt.ptr<f32>>"""
    )
    module = parse_ttir(
        f"module {{\n  tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {{\n{body}\n    tt.return\n  }}\n}}"
    )
    options = Options(enable_fp_fusion=False)
    MathLibrary(rules=RULES).run(module, PassContext(options, type("T", (), {"name": "cpu_ref"}), {}))
    ir = str(lower_module(module, "k", RULES, options, GOLDEN_TARGET))
    check_lines(
        ir,
        """
        call float @"atanf"(float
        call float @"hypotf"(float
        fcmp uno float
        zext i1
        call i32 @"llvm.ctpop.i32"
    """,
    )


def test_non_libdevice_symbol_is_declared_as_c_function():
    ir = lower(
        RANGE16
        + """
    %t = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "vendor_gelu"} : (tensor<16xf32>) -> tensor<16xf32>
    tt.store %q, %t : tensor<16x!tt.ptr<f32>>"""
    )
    check_lines(
        ir,
        """
        declare float @"vendor_gelu"(float
    """,
    )


def test_unknown_libdevice_name_is_refused():
    with pytest.raises(UnsupportedError, match="__nv_fadd_rd"):
        lower(
            RANGE16
            + """
    %t = tt.extern_elementwise %v, %v {libname = "", libpath = "", pure = true, symbol = "__nv_fadd_rd"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>"""
        )


def test_gather_and_histogram():
    ir = lower("""
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %g = tt.gather %r[%r] {axis = 0 : i32} : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
    %h = tt.histogram %g : tensor<16xi32> -> tensor<8xi32>
    %s = "tt.reduce"(%h) <{axis = 0 : i32}> ({
    ^bb0(%a: i32, %b: i32):
      %c = arith.addi %a, %b : i32
      tt.reduce.return %c : i32
    }) : (tensor<8xi32>) -> i32
    %p = tt.addptr %x, %s : !tt.ptr<f32>, i32""")
    check_lines(
        ir,
        """
        alloca [16 x i32]
        alloca [8 x i32]
        icmp ult i64
        add i32
    """,
    )


def test_print_formats_each_element_with_snprintf_and_one_write():
    ir = lower(
        RANGE16
        + """
    tt.print " v: " {hex = false, isSigned = array<i32: 1>} : %v : tensor<16xf32>"""
    )
    assert 'c"pid (%d, %d, %d) idx (%lld) v: %f\\0a\\00"' in ir
    check_lines(
        ir,
        """
        fpext float
        call i32 (ptr, i64, ptr, ...) @"snprintf"
        call i64 @"write"(i32 1
    """,
    )


def test_assert_records_first_failure_and_returns():
    ir = lower("""
    %c0 = arith.constant 0 : i32
    %ok = arith.cmpi sgt, %n, %c0 : i32
    tt.assert %ok, "n must be positive" : i1""")
    assert 'c"n must be positive\\00"' in ir and "tbs.assert" not in ir  # the state is the launch's, no global
    check_lines(
        ir,
        """
        i32 %".8", ptr %".9") alwaysinline
        br i1
        getelementptr {i32, i32, i32, i32, ptr, ptr}, ptr %".9", i32 0, i32 0
        i32 0, i32 1 acq_rel acquire
        ret void
        define void @"k"
        getelementptr ptr, ptr %".1", i64 2
        %"assert.state" = load ptr
        i32 %".4", ptr %"assert.state")
        load atomic i32, ptr %"assert.state" monotonic
    """,
    )


def test_early_return_branches_between_blocks():
    ir = lower("""
    %c0 = arith.constant 0 : i32
    %b = arith.cmpi sgt, %n, %c0 : i32
    cf.cond_br %b, ^bb1, ^bb2
  ^bb1:
    tt.return
  ^bb2:
    %p = tt.addptr %x, %n : !tt.ptr<f32>, i32
    %z = arith.constant 1.000000e+00 : f32
    tt.store %p, %z : !tt.ptr<f32>""")
    check_lines(
        ir,
        """
        icmp sgt i32
        br i1
        bb:
        ret void
        bb.1:
        getelementptr float
        store float
        ret void
        br.true:
        br label %"bb"
        br.false:
        br label %"bb.1"
    """,
    )


def test_barrier_emits_nothing():
    with_barrier = lower("    ttg.barrier all")
    assert with_barrier == lower("")


def test_ceil_and_floor_division_step_the_truncating_quotient():
    """Expanded by the shared legalization (sdk/transforms/int_semantics.py); cpu_ref has no rule of its own."""
    ir = lower(
        """
    %c = arith.constant 3 : i32
    %a = arith.ceildivsi %n, %c : i32
    %b = arith.floordivsi %a, %c : i32
    %u = arith.ceildivui %b, %c : i32
    %p = tt.addptr %x, %u : !tt.ptr<f32>, i32""",
        legalize=True,
    )
    check_lines(
        ir,
        """
        sdiv i32
        srem i32
        icmp slt i32
        add i32
        sdiv i32
        srem i32
        sub i32
        udiv i32
        urem i32
        add i32
    """,
    )


def test_f16_dot_accumulates_in_f32_and_rounds_once():
    ir = lower(
        """
    %a = arith.constant dense<1.0> : tensor<16x16xf16>
    %c = arith.constant dense<0.0> : tensor<16x16xf16>
    %d = tt.dot %a, %a, %c : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf16>"""
    )
    check_lines(
        ir,
        """
        fpext half
        llvm.fma
        fptrunc float
    """,
    )
    assert not any("llvm.fma" in line and "half" in line for line in ir.splitlines())


@pytest.mark.parametrize("ty,nan_kept", [("f8E5M2", False), ("f8E4M3FNUZ", True)])
def test_fp8_abs_clears_the_sign_bit_of_the_byte(ty, nan_kept):
    ir = lower(
        f"""
    %r = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<{ty}> -> tensor<16x!tt.ptr<{ty}>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<{ty}>>, tensor<16xi32>
    %v = tt.load %q : tensor<16x!tt.ptr<{ty}>>
    %a = math.absf %v : tensor<16x{ty}>
    tt.store %q, %a : tensor<16x!tt.ptr<{ty}>>""",
        args=f"%x: !tt.ptr<{ty}>",
    )
    check_lines(ir, "and i8")
    assert "llvm.fabs" not in ir
    assert ("icmp eq i8" in ir) == nan_kept


def test_reduce_over_a_middle_axis_folds_whole_vectors():
    """axis 1 of [4, 8, 16]: each output row of 16 is one vector accumulator over the 8 slices (lane-wise, no
    horizontal step): what the thread-locality pass's in-loop reduction needs to be cheap."""
    import triton_backend_sdk.backends.cpu_ref.compiler

    ir = lower("""
    %ps = tt.splat %x : !tt.ptr<f32> -> tensor<4x8x16x!tt.ptr<f32>>
    %v = tt.load %ps : tensor<4x8x16x!tt.ptr<f32>>
    %s = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.maxnumf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<4x8x16xf32>) -> tensor<4x16xf32>
    %q = tt.splat %x : !tt.ptr<f32> -> tensor<4x16x!tt.ptr<f32>>
    tt.store %q, %s : tensor<4x16x!tt.ptr<f32>>""")
    v = min(16, triton_backend_sdk.backends.cpu_ref.compiler.host_descriptor().vector_width_bits // 32)
    check_lines(
        ir,
        f"""
        vaxis:
        phi <{v} x float>
        load <{v} x float>
        call <{v} x float> @"llvm.maxnum.v{v}f32"
        vaxis.done:
        store <{v} x float>
    """,
    )
