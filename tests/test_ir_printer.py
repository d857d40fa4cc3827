"""Tests of the IR printer: round trips, Triton's own spelling, acceptance by Triton's parser, inline expected text."""

from __future__ import annotations

import math
import re

import pytest
import triton
from triton_backend_sdk.ir import (
    Block,
    FunctionType,
    IntegerAttr,
    Location,
    Module,
    Region,
    StringAttr,
    TensorType,
    TypeAttr,
    UnknownOp,
    parse_ttir,
    print_module,
    print_op,
    verify,
)
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op, Value
from triton_backend_sdk.ir.printer import format_attribute, format_float
from triton_backend_sdk.ir.reader import round_float
from triton_backend_sdk.ir.types import bf16, f16, f32, f64, i1, i32
from ttir_corpus import CORPUS, CORPUS_BY_NAME, SNIPPETS, cross_check, ttir_text

NAMES = [e.name for e in CORPUS]


def strip_locations(text: str) -> str:
    """Drop `#locN = ...` alias lines and every ` loc(...)` (balanced, quotes respected)."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("#loc")]
    out = []
    for ln in lines:
        while (i := ln.find(" loc(")) >= 0:
            depth, j, quoted = 0, i + 4, False
            while j < len(ln):
                c = ln[j]
                if c == '"' and ln[j - 1] != "\\":
                    quoted = not quoted
                elif not quoted and c == "(":
                    depth += 1
                elif not quoted and c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            ln = ln[:i] + ln[j + 1 :]
        out.append(ln.rstrip())
    return "\n".join(out).strip() + "\n"


def structure(m: Module) -> list[tuple]:
    """Everything the IR holds, in walk order, with values identified by definition order (names excluded)."""
    ids: dict[Value, int] = {}

    def vid(v: Value) -> int:
        return ids.setdefault(v, len(ids))

    rows: list[tuple] = []
    for op in m.walk():
        for v in op.results:
            vid(v)
        blocks = []
        for r in op.regions:
            for b in r.blocks:
                blocks.append(tuple((vid(a), str(a.type), a.loc) for a in b.args))
        rows.append(
            (
                op.op_name,
                type(op).__name__,
                tuple(str(r.type) for r in op.results),
                op.loc,
                tuple(
                    sorted(
                        (k, format_attribute(a) if not isinstance(a, O.EnumAttr) else a) for k, a in op.attrs.items()
                    )
                ),
                tuple(blocks),
            )
        )
    for op in m.walk():  # operands may refer to values defined later in text (cf blocks): number them all first
        rows.append(tuple(vid(v) for v in op.operands))
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Corpus


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name: str) -> None:
    m1 = parse_ttir(ttir_text(CORPUS_BY_NAME[name]))
    p1 = print_module(m1)
    m2 = parse_ttir(p1)
    assert print_module(m2) == p1
    assert structure(m2) == structure(m1)
    verify(m2)


@pytest.mark.parametrize("name", NAMES)
def test_printed_text_is_tritons_modulo_locations(name: str) -> None:
    """Custom forms, value names and numbering reproduce Triton's own text exactly (locations aside)."""
    text = ttir_text(CORPUS_BY_NAME[name])
    expected = re.sub(r"<tensor<([^<>]*)>>", r"<\1>", strip_locations(text))  # 3.7 -> 3.9 tensordesc spelling
    assert strip_locations(print_module(parse_ttir(text))) == expected


@pytest.mark.parametrize("name", NAMES)
def test_printed_text_is_accepted_by_tritons_parser(name: str) -> None:
    printed = print_module(parse_ttir(ttir_text(CORPUS_BY_NAME[name])))
    if triton.__version__.startswith("3.7") and "tensordesc" in printed:
        pytest.skip("Triton 3.7 spells tensor descriptors differently from the printer (3.9 spelling)")
    cross_check(printed, parse_ttir(printed))


def test_locations_survive_the_round_trip() -> None:
    m1 = parse_ttir(ttir_text(CORPUS_BY_NAME["softmax"]))
    m2 = parse_ttir(print_module(m1))
    locs1 = [op.loc for op in m1.walk()]
    assert locs1 == [op.loc for op in m2.walk()] and sum(loc is not None for loc in locs1) > 20
    args1 = [a.loc for op in m1.walk() for r in op.regions for b in r.blocks for a in b.args]
    assert args1 == [a.loc for op in m2.walk() for r in op.regions for b in r.blocks for a in b.args]


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippets_round_trip(name: str) -> None:
    m1 = parse_ttir(SNIPPETS[name])
    p1 = print_module(m1)
    assert print_module(parse_ttir(p1)) == p1
    assert structure(parse_ttir(p1)) == structure(m1)


def test_printing_is_deterministic() -> None:
    text = ttir_text(CORPUS_BY_NAME["argmax_reduce"])
    assert print_module(parse_ttir(text)) == print_module(parse_ttir(text))


# ---------------------------------------------------------------------------------------------------------------------
# Inline expected text

KERNEL = """#loc = loc("k.py":1:0)
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %cst = arith.constant dense<0xFF800000> : tensor<4xf32> loc(#loc1)
    %offs = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32> loc(#loc2)
    %mask = tt.splat %n : i32 -> tensor<4xi32> loc(#loc1)
    %mask_0 = arith.cmpi slt, %offs, %mask : tensor<4xi32> loc(#loc1)
    %0 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>> loc(#loc1)
    %1 = tt.addptr %0, %offs : tensor<4x!tt.ptr<f32>>, tensor<4xi32> loc(#loc1)
    %x = tt.load %1, %mask_0, %cst : tensor<4x!tt.ptr<f32>> loc(#loc3)
    %2 = arith.cmpi sgt, %n, %n : i32 loc(#loc1)
    scf.if %2 {
      tt.store %1, %x, %mask_0 : tensor<4x!tt.ptr<f32>> loc(#loc1)
    } loc(#loc1)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":3:7)
#loc2 = loc("offs"(#loc1))
#loc3 = loc(callsite(#loc4 at #loc2))
#loc4 = loc("standard.py":40:1)
"""


def test_small_kernel_prints_as_expected() -> None:
    m = parse_ttir(KERNEL)
    assert m.attrs["ttg.num-warps"] == IntegerAttr(4, i32)
    (scf_if,) = [op for op in m.walk() if isinstance(op, O.If)]
    assert isinstance(scf_if.then_block.ops[-1], O.Yield)  # implicit, and not printed back
    assert (
        print_module(m)
        == """module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"("k.py":1:0)), %n: i32 loc("n"("k.py":1:0))) attributes {noinline = false} {
    %cst = arith.constant dense<0xFF800000> : tensor<4xf32> loc("k.py":3:7)
    %offs = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32> loc("offs"("k.py":3:7))
    %mask = tt.splat %n : i32 -> tensor<4xi32> loc("k.py":3:7)
    %mask_0 = arith.cmpi slt, %offs, %mask : tensor<4xi32> loc("k.py":3:7)
    %0 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>> loc("k.py":3:7)
    %1 = tt.addptr %0, %offs : tensor<4x!tt.ptr<f32>>, tensor<4xi32> loc("k.py":3:7)
    %x = tt.load %1, %mask_0, %cst : tensor<4x!tt.ptr<f32>> loc("offs"("k.py":3:7))
    %2 = arith.cmpi sgt, %n, %n : i32 loc("k.py":3:7)
    scf.if %2 {
      tt.store %1, %x, %mask_0 : tensor<4x!tt.ptr<f32>> loc("k.py":3:7)
    } loc("k.py":3:7)
    tt.return loc("k.py":1:0)
  } loc("k.py":1:0)
} loc("k.py":1:0)
"""
    )


def test_hand_built_ir_gets_numbered_names() -> None:
    """IR built by a pass has no names: values are numbered; ops without a custom form print generically."""
    body = Block([i32, TensorType((8,), f32)])
    a, t = body.args
    c = body.append(O.Constant(result_types=[i32], attrs={"value": IntegerAttr(3, i32)}))
    s = body.append(O.AddI([a, c.result], [i32], loc=Location("p.py", 4, 2, "s")))
    red = body.append(O.Reduce([t], [f32], attrs={"axis": IntegerAttr(0, i32)}, regions=[Region([Block([f32, f32])])]))
    combine = red.regions[0].entry
    mx = combine.append(O.MaxNumF(list(combine.args), [f32]))
    combine.append(O.ReduceReturn([mx.result]))
    odd = body.append(UnknownOp("my.op", [s.result, red.result], [i1], {"k": StringAttr("v")}))
    body.append(O.Return([odd.result]))
    fn = O.Func(
        attrs={"sym_name": StringAttr("f"), "function_type": TypeAttr(FunctionType((i32, body.args[1].type), (i1,)))},
        regions=[Region([body])],
    )
    m = Module([fn])
    verify(m)
    expected = """module {
  tt.func @f(%0: i32, %1: tensor<8xf32>) -> i1 {
    %2 = arith.constant 3 : i32
    %3 = arith.addi %0, %2 : i32 loc("s"("p.py":4:2))
    %4 = "tt.reduce"(%1) <{axis = 0 : i32}> ({
    ^bb0(%6: f32, %7: f32):
      %8 = arith.maxnumf %6, %7 : f32
      tt.reduce.return %8 : f32
    }) : (tensor<8xf32>) -> f32
    %5 = "my.op"(%3, %4) {k = "v"} : (i32, f32) -> i1
    tt.return %5 : i1
  }
}
"""
    assert print_module(m) == expected
    assert print_module(parse_ttir(expected)) == expected
    assert print_op(s) == '%0 = arith.addi %1, %2 : i32 loc("s"("p.py":4:2))'


def test_names_are_made_unique_and_reused_across_sibling_regions() -> None:
    text = """module {
  tt.func @f(%c: i1, %a: i32) -> i32 {
    %r = scf.if %c -> (i32) {
      %y = arith.addi %a, %a : i32
      scf.yield %y : i32
    } else {
      %y = arith.muli %a, %a : i32
      scf.yield %y : i32
    }
    tt.return %r : i32
  }
}
"""
    m = parse_ttir(text)
    assert print_module(m) == text  # sibling regions may reuse %y, like MLIR
    f = m.ops[0]
    f.body.ops[0].results[0].name = "a"  # now clashes with the argument %a
    assert "%a_0 = scf.if %c -> (i32) {" in print_module(m)
    assert "tt.return %a_0 : i32" in print_module(m)


def test_multi_result_naming() -> None:
    text = """module {
  tt.func @f(%a: tensor<4x2xf32>) {
    %lo, %hi = tt.split %a : tensor<4x2xf32> -> tensor<4xf32>
    %s:2 = "tt.reduce"(%lo, %hi) <{axis = 0 : i32}> ({
    ^bb0(%p: f32, %q: f32, %u: f32, %v: f32):
      tt.reduce.return %p, %q : f32, f32
    }) : (tensor<4xf32>, tensor<4xf32>) -> (f32, f32)
    %0 = arith.addf %s#0, %s#1 : f32
    tt.return
  }
}
"""
    assert print_module(parse_ttir(text)) == text


@pytest.mark.parametrize(
    ("value", "type_", "text"),
    [
        (0.1, f32, "1.000000e-01"),
        (1.5, f64, "1.500000e+00"),
        (0.3333333432674408, f32, "3.3333334e-01"),  # 1/3 as an f32
        (1 / 3, f64, "3.333333333333333e-01"),
        (-math.inf, f32, "0xFF800000"),
        (math.inf, f64, "0x7FF0000000000000"),
        (math.nan, f32, "0x7FC00000"),
        (math.nan, f16, "0x7E00"),
        (-math.inf, bf16, "0xFF80"),
        (-0.0, f32, "-0.000000e+00"),
        (65504.0, f16, "6.550400e+04"),
    ],
)
def test_float_spelling(value: float, type_: object, text: str) -> None:
    assert format_float(value, type_) == text  # type: ignore[arg-type]
    constant = f"module {{\n  tt.func @k() {{\n    %c = arith.constant {text} : {type_}\n    tt.return\n  }}\n}}\n"
    read = next(op for op in parse_ttir(constant).walk() if isinstance(op, O.Constant)).value.value
    exact = round_float(value, type_)  # type: ignore[arg-type]
    assert read == exact and math.copysign(1, read) == math.copysign(1, exact) or math.isnan(read) and math.isnan(value)


def test_unknown_op_prints_generic_form_that_reads_back() -> None:
    m = parse_ttir(SNIPPETS["unknown_ops"])
    printed = print_module(m)
    assert '%1 = "foo.custom"(%a, %0) {q = "s"} : (i32, i32) -> i32' in printed
    assert '%2:2 = "foo.pair"(%1) : (i32) -> (i32, f32)' in printed
    assert print_module(parse_ttir(printed)) == printed


def test_triton_37_spelling_of_cache_hints_is_kept() -> None:
    printed = print_module(parse_ttir(SNIPPETS["ttir37"]))
    assert "tt.load %a, %m cacheModifier = cg evictionPolicy = evict_last : tensor<64x!tt.ptr<f32>>" in printed
    assert "tt.store %a, %x, %m cacheModifier = wb : tensor<64x!tt.ptr<f32>>" in printed
    assert ": <f32>, <32x32xf32>" in printed  # tensor descriptors in the 3.9 spelling


def _ops(m: Module) -> list[Op]:
    return list(m.walk())


def test_string_escapes_round_trip() -> None:
    text = """module {
  tt.func @k(%a: i32) {
    tt.print "a\\0Ab\\22c\\\\" {hex = false, isSigned = array<i32: 1>} : %a : i32
    tt.return
  }
}
"""
    m = parse_ttir(text)
    (p,) = [op for op in _ops(m) if isinstance(op, O.Print)]
    assert p.prefix == 'a\nb"c\\'
    assert print_module(m) == text
