"""Golden LLVM IR per cpu_ref rule family: small TTIR in, the expected (unoptimised) LLVM IR lines out, in order.

Expected fragments are written inline; `check_lines` is a tiny FileCheck: each expected line must appear, in order,
as a substring of some later line of the output, whitespace runs collapsed (SSA names are mostly left out).
"""

from __future__ import annotations

import pytest
from golden_ir import check_lines, lower
from triton_backend_sdk.errors import LoweringError


def test_entry_abi():
    ir = lower("", args="%x: !tt.ptr<f32>, %n: i32, %f: f16, %b: i1")
    check_lines(
        ir,
        """
        define internal void @"k.program"(ptr %".1", i32 %".2", half %".3", i1 %".4", i32 %".5", i32 %".6"
        define void @"k"(ptr %".1", i32 %".2", i32 %".3", i32 %".4", i64 %".5", i64 %".6")
        load ptr, ptr
        load ptr, ptr
        load i32, ptr
        load half, ptr
        load i8, ptr
        icmp ne i8
        urem i64
        udiv i64
        call void @"k.program"
    """,
    )


def test_elementwise_chain_is_one_loop():
    ir = lower("""
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %v = tt.load %q : tensor<64x!tt.ptr<f32>>
    %c = arith.constant dense<2.000000e+00> : tensor<64xf32>
    %m = arith.mulf %v, %c : tensor<64xf32>
    %a = arith.addf %m, %v : tensor<64xf32>
    tt.store %q, %a : tensor<64x!tt.ptr<f32>>""")
    check_lines(  # `v` feeds the mul and the add of one elementwise chain into the store: it is read in the store's
        # loop (no buffer), at each element once per use (LLVM merges the repeats); the store is one <16 x float> per run
        ir,
        """
        loop:
        load float, ptr
        fmul float
        load float, ptr
        fadd float
        store <16 x float>
    """,
    )
    assert "alloca" not in ir
    assert ir.count("fmul") == 16 and ir.count("fadd") == 16  # one run of 16 per iteration of one loop


def test_masked_load_branches_around_the_access():
    ir = lower("""
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %s = tt.splat %n : i32 -> tensor<16xi32>
    %mask = arith.cmpi slt, %r, %s : tensor<16xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %o = arith.constant dense<0xFF800000> : tensor<16xf32>
    %v = tt.load %q, %mask, %o : tensor<16x!tt.ptr<f32>>
    tt.store %q, %v, %mask : tensor<16x!tt.ptr<f32>>""")
    check_lines(
        ir,
        """
        icmp slt i32
        br i1
        load float
        phi float [%".20", %"ld"], [0xfff0000000000000, %"loop"]
        icmp slt i32
        br i1
        store float
    """,
    )
    assert ir.count('label %"loop"') == 2, "the load is read in the store's loop (one loop, no buffer)"


def test_integer_division_is_guarded():
    """The guards come from the shared legalization (sdk/transforms/int_semantics.py); cpu_ref renders them."""
    ir = lower(
        """
    %a = arith.divsi %n, %n : i32
    %b = arith.remui %a, %n : i32""",
        legalize=True,
    )
    check_lines(
        ir,
        """
        icmp eq i32
        icmp eq i32 %".2", 4294967295
        select i1
        sdiv i32
        select i1
        urem i32
    """,
    )


def test_float_maximum_is_the_intrinsic():
    ir = lower("""
    %f = arith.sitofp %n : i32 to f32
    %m = arith.maximumf %f, %f : f32""")
    check_lines(
        ir,
        """
        sitofp i32
        call float @"llvm.maximum.f32"(float
    """,
    )


@pytest.mark.parametrize("op,rel", [("maxnumf", "ogt"), ("minnumf", "olt")])
def test_float_min_max_num_are_selects(op, rel):
    """Not llvm.maxnum/minnum: as a loop-carried scalar those are FMaxNum/FMinNum recurrences, which LLVM 22's loop
    vectorizer miscompiles (the NaN early exit drops the remainder) or aborts on (elementwise.py `_num_select`)."""
    ir = lower(f"""
    %f = arith.sitofp %n : i32 to f32
    %g = arith.sitofp %n : i32 to f32
    %m = arith.{op} %f, %g : f32""")
    check_lines(
        ir,
        f"""
        sitofp i32
        fcmp {rel} float
        select i1
        fcmp uno float
        select i1
    """,
    )
    assert "llvm.maxnum" not in ir and "llvm.minnum" not in ir


def test_math_and_casts():
    """exp is inline (vectorizable) code, not a libm call; see codegen/vmath.py. fptosi is the plain instruction:
    its saturation is legalized in SDK IR before cpu_ref sees it."""
    ir = lower("""
    %f = arith.sitofp %n : i32 to f32
    %e = math.exp %f : f32
    %h = arith.truncf %e : f32 to f16
    %i = arith.fptosi %h : f16 to i32""")
    check_lines(
        ir,
        """
        call float @"llvm.maxnum.f32"
        call float @"llvm.roundeven.f32"
        call float @"llvm.fma.f32"
        call float @"llvm.ldexp.f32.i32"
        fcmp uno float
        fptrunc float
        fptosi half
    """,
    )


def test_reduce_keeps_lanes_and_folds_them():
    ir = lower("""
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = "tt.reduce"(%r) <{axis = 0 : i32}> ({
    ^bb0(%a: i32, %b: i32):
      %c = arith.addi %a, %b : i32
      tt.reduce.return %c : i32
    }) : (tensor<64xi32>) -> i32
    %p = tt.addptr %x, %s : !tt.ptr<f32>, i32""")
    check_lines(
        ir,
        """
        alloca [16 x i32]
        store i32
        add i32
        add i32
    """,
    )


def test_scf_for_carries_a_tensor_in_a_buffer():
    ir = lower("""
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<8xf32>) : i32 {
      %b = arith.addf %a, %a : tensor<8xf32>
      scf.yield %b : tensor<8xf32>
    }""")
    check_lines(
        ir,
        """
        alloca [8 x float]
        icmp slt i32
        phi i32
        fadd float
        add i32
    """,
    )


def test_missing_rule_error():
    with pytest.raises(LoweringError, match="vendor.mystery"):
        lower("""
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %h = "vendor.mystery"(%r) : (tensor<16xi32>) -> tensor<16xi32>""")
