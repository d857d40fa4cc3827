"""Golden tests of sdk/transforms/int_semantics.py: SDK IR in, SDK IR out (inline), plus its place in the pipeline."""

from __future__ import annotations

import textwrap

import pytest
from triton_backend_sdk.analysis.axis_info import analyze
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.int_semantics import IntSemantics


def _run(args: str, body: str) -> str:
    """The body of `tt.func @k(args)` after the pass, as printed (indentation removed)."""
    text = f"module {{\n  tt.func public @k({args}) {{\n{body}\n    tt.return\n  }}\n}}\n"
    module = parse_ttir(text)
    IntSemantics().run(module, None)
    verify(module)
    lines = print_module(module).splitlines()
    return "\n".join(line.strip() for line in lines[2:-3])


def _expect(text: str) -> str:
    return textwrap.dedent(text).strip()


def test_signed_division_guards_zero_and_minus_one() -> None:
    out = _run("%a: i32, %c: i32", "%q = arith.divsi %a, %c : i32")
    assert out == _expect("""
        %0 = arith.constant 0 : i32
        %1 = arith.cmpi eq, %c, %0 : i32
        %2 = arith.constant -1 : i32
        %3 = arith.cmpi eq, %c, %2 : i32
        %4 = arith.ori %1, %3 : i1
        %5 = arith.constant 1 : i32
        %6 = arith.select %4, %5, %c : i32
        %7 = arith.divsi %a, %6 : i32
        %8 = arith.subi %0, %a : i32
        %9 = arith.select %3, %8, %7 : i32
        %q = arith.select %1, %2, %9 : i32
    """)


def test_signed_remainder_needs_no_minus_one_select() -> None:
    out = _run("%a: tensor<8xi16>, %c: tensor<8xi16>", "%r = arith.remsi %a, %c : tensor<8xi16>")
    assert out == _expect("""
        %0 = arith.constant dense<0> : tensor<8xi16>
        %1 = arith.cmpi eq, %c, %0 : tensor<8xi16>
        %2 = arith.constant dense<-1> : tensor<8xi16>
        %3 = arith.cmpi eq, %c, %2 : tensor<8xi16>
        %4 = arith.ori %1, %3 : tensor<8xi1>
        %5 = arith.constant dense<1> : tensor<8xi16>
        %6 = arith.select %4, %5, %c : tensor<8xi1>, tensor<8xi16>
        %7 = arith.remsi %a, %6 : tensor<8xi16>
        %r = arith.select %1, %2, %7 : tensor<8xi1>, tensor<8xi16>
    """)


def test_64bit_unsigned_division_by_zero_follows_the_32bit_bypass() -> None:
    out = _run("%a: i64, %c: i64", "%q = arith.divui %a, %c : i64")
    assert out == _expect("""
        %0 = arith.constant 0 : i64
        %1 = arith.cmpi eq, %c, %0 : i64
        %2 = arith.constant 1 : i64
        %3 = arith.select %1, %2, %c : i64
        %4 = arith.divui %a, %3 : i64
        %5 = arith.constant -1 : i64
        %6 = arith.constant 4294967296 : i64
        %7 = arith.cmpi ult, %a, %6 : i64
        %8 = arith.constant 4294967295 : i64
        %9 = arith.select %7, %8, %5 : i64
        %q = arith.select %1, %9, %4 : i64
    """)


def test_constant_divisor_and_amount_stay_plain() -> None:
    body = """
    %c7 = arith.constant 7 : i32
    %q = arith.divsi %a, %c7 : i32
    %r = arith.remui %a, %c7 : i32
    %s = arith.shli %a, %c7 : i32
    """
    out = _run("%a: i32", body)
    assert out == _expect("""
        %c7 = arith.constant 7 : i32
        %q = arith.divsi %a, %c7 : i32
        %r = arith.remui %a, %c7 : i32
        %s = arith.shli %a, %c7 : i32
    """)


def test_zero_and_minus_one_constants_are_still_guarded() -> None:
    out = _run("%a: i32", "%m = arith.constant -1 : i32\n%q = arith.divsi %a, %m : i32")
    assert "arith.cmpi eq" in out and "arith.select" in out


def test_shifts_clamp_the_amount() -> None:
    body = """
    %l = arith.shli %a, %c : i32
    %u = arith.shrui %a, %c : i32
    %s = arith.shrsi %a, %c : i32
    """
    assert _run("%a: i32, %c: i32", body) == _expect("""
        %0 = arith.constant 32 : i32
        %1 = arith.cmpi uge, %c, %0 : i32
        %2 = arith.constant 0 : i32
        %3 = arith.constant 31 : i32
        %4 = arith.andi %c, %3 : i32
        %5 = arith.shli %a, %4 : i32
        %l = arith.select %1, %2, %5 : i32
        %6 = arith.constant 32 : i32
        %7 = arith.cmpi uge, %c, %6 : i32
        %8 = arith.constant 0 : i32
        %9 = arith.constant 31 : i32
        %10 = arith.andi %c, %9 : i32
        %11 = arith.shrui %a, %10 : i32
        %u = arith.select %7, %8, %11 : i32
        %12 = arith.constant 31 : i32
        %13 = arith.minui %c, %12 : i32
        %s = arith.shrsi %a, %13 : i32
    """)


def test_64bit_shift_reads_the_low_32_bits_of_the_amount() -> None:
    out = _run("%a: i64, %c: i64", "%s = arith.shrsi %a, %c : i64")
    assert out == _expect("""
        %0 = arith.constant 4294967295 : i64
        %1 = arith.andi %c, %0 : i64
        %2 = arith.constant 63 : i64
        %3 = arith.minui %1, %2 : i64
        %s = arith.shrsi %a, %3 : i64
    """)


def test_float_to_i8_saturates_through_16_bits() -> None:
    out = _run("%x: f32", "%i = arith.fptosi %x : f32 to i8")
    assert out == _expect("""
        %0 = arith.constant 3.276800e+04 : f32
        %1 = arith.cmpf olt, %x, %0 : f32
        %2 = arith.cmpf oge, %x, %0 : f32
        %3 = arith.constant -3.276800e+04 : f32
        %4 = arith.cmpf ogt, %x, %3 : f32
        %5 = arith.andi %1, %4 : i1
        %6 = arith.constant 0.000000e+00 : f32
        %7 = arith.select %5, %x, %6 : f32
        %8 = arith.fptosi %7 : f32 to i16
        %9 = arith.constant 32767 : i16
        %10 = arith.constant -32768 : i16
        %11 = arith.select %2, %9, %10 : i16
        %12 = arith.cmpf uno, %x, %x : f32
        %13 = arith.constant 0 : i16
        %14 = arith.select %12, %13, %11 : i16
        %15 = arith.select %5, %8, %14 : i16
        %i = arith.trunci %15 : i16 to i8
    """)


def test_f64_to_i32_nan_is_int_min_without_a_nan_select() -> None:
    out = _run("%x: f64", "%i = arith.fptosi %x : f64 to i32")
    assert "cmpf uno" not in out
    assert "arith.fptosi %7 : f64 to i32" in out
    assert out.splitlines()[-1] == "%i = arith.select %5, %8, %11 : i32"


def test_half_sources_are_widened_to_f32_first() -> None:
    out = _run("%x: f16", "%i = arith.fptoui %x : f16 to i32")
    assert out.splitlines()[0] == "%0 = arith.extf %x : f16 to f32"
    assert "arith.constant 4.2949673e+09 : f32" in out and "arith.fptoui %7 : f32 to i32" in out
    out = _run("%x: bf16", "%i = arith.fptosi %x : bf16 to i16")
    assert out.splitlines()[0] == "%0 = arith.extf %x : bf16 to f32"


def test_ceildiv_and_floordiv_expand_to_one_guarded_quotient() -> None:
    out = _run("%a: i32, %c: i32", "%q = arith.floordivsi %a, %c : i32")
    assert out.count("arith.cmpi eq, %c") == 2  # the divisor's guards are made once for quotient and remainder
    assert "arith.divsi" in out and "arith.remsi" in out and "floordivsi" not in out
    assert out.splitlines()[-1].startswith("%q = arith.subi")


_FACTS_BODY = """
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %n : i32 -> tensor<64xi32>
    %m = arith.remsi %r, %s : tensor<64xi32>
    %q = arith.divui %r, %s : tensor<64xi32>
"""


def test_the_plain_ops_axis_info_is_carried_onto_the_guarded_form() -> None:
    """`arange(64) % n` with n % 16 == 0: runs of 16 consecutive values starting at multiples of 16 (Triton's
    facts, which assume n != 0); `arange(64) // n` is constant over runs of 16. The guards hide both from AxisInfo,
    so the final select states them as hints (and the analysis reads them back)."""
    out = _run("%n: i32 {tt.divisibility = 16 : i32}", _FACTS_BODY)
    hints = "tt.constancy = dense<{}> : tensor<1xi32>, tt.contiguity = dense<{}> : tensor<1xi32>, "
    hints += "tt.divisibility = dense<{}> : tensor<1xi32>"
    lines = out.splitlines()
    assert lines[10] == "%m = arith.select %1, %2, %7 {" + hints.format(1, 16, 16) + "} : tensor<64xi1>, tensor<64xi32>"
    assert (
        lines[-1] == "%q = arith.select %9, %13, %12 {" + hints.format(16, 1, 1) + "} : tensor<64xi1>, tensor<64xi32>"
    )
    assert sum("tt.contiguity" in line for line in lines) == 2  # nothing else carries a hint


def test_carried_facts_are_what_the_analysis_finds_on_the_plain_ops() -> None:
    text = f"module {{\n  tt.func public @k(%n: i32 {{tt.divisibility = 16 : i32}}) {{{_FACTS_BODY}    tt.return\n  }}\n}}\n"
    module = parse_ttir(text)
    func = next(op for op in module.walk() if isinstance(op, O.Func))
    values = {v.name: v for op in func.walk() for v in op.results if v.name in ("m", "q")}
    plain = analyze(func)
    want = {k: plain[v] for k, v in values.items()}
    IntSemantics().run(module, None)
    guarded = analyze(func)
    values = {v.name: v for op in func.walk() for v in op.results if v.name in ("m", "q")}
    for k, v in values.items():
        assert str(guarded[v]) == str(want[k])
    assert guarded[values["m"]].contiguity == (16,) and guarded[values["q"]].constancy == (16,)


def test_ops_without_edge_cases_are_left_alone() -> None:
    body = "%m = tt.mulhiui %a, %c : i32\n%s = arith.addi %a, %c : i32\n%f = arith.sitofp %a : i32 to f32"
    assert _run("%a: i32, %c: i32", body) == _expect(body)


@pytest.mark.parametrize("op", ["divsi", "remui", "shli", "shrsi"])
def test_i1_is_left_alone(op: str) -> None:
    body = f"%r = arith.{op} %a, %c : i1"
    assert _run("%a: i1, %c: i1", body) == body


def test_the_pass_is_a_shared_legalization() -> None:
    from triton_backend_sdk.descriptor import TargetDescriptor
    from triton_backend_sdk.options import Options

    names = [p.name for p in legalization_passes(TargetDescriptor(name="t", arch="x"), Options())]
    assert "int-semantics" in names
