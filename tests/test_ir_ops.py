"""Tests of the declared op classes: every registered op round-trips through its syntax, typed builders, the
rewriter, and verifier errors that name the op."""

from __future__ import annotations

import pytest
from triton_backend_sdk.ir import (
    OP_CLASSES,
    Block,
    FunctionType,
    IntegerAttr,
    IRVerificationError,
    Module,
    Region,
    StringAttr,
    TensorType,
    TypeAttr,
    UnknownOp,
    parse_ttir,
    print_module,
    verify,
)
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op
from triton_backend_sdk.ir.enums import CmpIPredicate, EnumAttr, MemSemantic
from triton_backend_sdk.ir.fields import Operand, Result
from triton_backend_sdk.ir.rewriter import Rewriter, insert_after, replace
from triton_backend_sdk.ir.types import PointerType, f32, i1, i8, i32, i64, index
from ttir_corpus import cross_check

# ---------------------------------------------------------------------------------------------------------------------
# One module holding every built-in op, in the printer's canonical spelling (Triton's own).

_CASTS = {
    "arith.extsi": ("i", "i32", "i64"),
    "arith.extui": ("i", "i32", "i64"),
    "arith.trunci": ("l", "i64", "i32"),
    "arith.extf": ("h", "f16", "f32"),
    "arith.truncf": ("f", "f32", "f16"),
    "arith.sitofp": ("i", "i32", "f32"),
    "arith.uitofp": ("i", "i32", "f32"),
    "arith.fptosi": ("f", "f32", "i32"),
    "arith.fptoui": ("f", "f32", "i32"),
    "arith.bitcast": ("f", "f32", "i32"),
    "arith.index_cast": ("i", "i32", "index"),
    "arith.index_castui": ("i", "i32", "index"),
}


#: dialect modules of SDK-only ops, which Triton's parser does not know (each has its own round-trip test)
_SDK_ONLY = (".libm", ".device", ".sdk_math")


def _family_lines() -> list[str]:
    lines = []
    for k, (name, cls) in enumerate(sorted(OP_CLASSES.items())):
        if not cls.__module__.startswith("triton_backend_sdk.ir.dialects.") or cls.__module__.endswith(_SDK_ONLY):
            continue
        if name in _CASTS:
            arg, src, dst = _CASTS[name]
            lines.append(f"%v{k} = {name} %{arg} : {src} to {dst}")
        elif issubclass(cls, O.FloatBinaryOp) and name.startswith(("arith.", "math.")):
            lines.append(f"%v{k} = {name} %f, %g : f32")
        elif issubclass(cls, O.IntBinaryOp) and name.startswith("arith."):
            lines.append(f"%v{k} = {name} %i, %j : i32")
        elif issubclass(cls, O.FloatUnaryOp) and name.startswith(("arith.", "math.")):
            lines.append(f"%v{k} = {name} %f : f32")
        elif issubclass(cls, O.UnaryOp) and name.startswith("math."):
            lines.append(f"%v{k} = {name} %i : i32")
    return lines


_BODY = """\
%c0 = arith.constant 0 : i32
%cf = arith.constant 1.500000e+00 : f32
%true = arith.constant true
%cst = arith.constant dense<0.000000e+00> : tensor<4xf32>
%cmp = arith.cmpi slt, %i, %j : i32
%cmpf = arith.cmpf olt, %f, %g fastmath<nnan> : f32
%sel = arith.select %b, %f, %g : f32
%fma = math.fma %f, %g, %f : f32
%sum = arith.addf %f, %g fastmath<fast> : f32
%pid = tt.get_program_id x : i32
%np = tt.get_num_programs y : i32
%r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
%one = tt.splat %i : i32 -> tensor<1xi32>
%us = tt.unsplat %one : tensor<1xi32>
%sp = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
%ptrs = tt.addptr %sp, %r : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
%m = tt.splat %b : i1 -> tensor<4xi1>
%tsel = arith.select %m, %cst, %cst : tensor<4xi1>, tensor<4xf32>
%x = tt.load %ptrs, %m, %cst : tensor<4x!tt.ptr<f32>>
%y = tt.load %ptrs {isVolatile = true} : tensor<4x!tt.ptr<f32>>
tt.store %ptrs, %x, %m : tensor<4x!tt.ptr<f32>>
%ed = tt.expand_dims %x {axis = 0 : i32} : tensor<4xf32> -> tensor<1x4xf32>
%bc = tt.broadcast %ed : tensor<1x4xf32> -> tensor<2x4xf32>
%rs = tt.reshape %bc allow_reorder : tensor<2x4xf32> -> tensor<8xf32>
%tr = tt.trans %bc {order = array<i32: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32>
%jn = tt.join %x, %y : tensor<4xf32> -> tensor<4x2xf32>
%outLHS, %outRHS = tt.split %jn : tensor<4x2xf32> -> tensor<4xf32>
%cat = tt.cat %x, %y : tensor<4xf32> -> tensor<8xf32>
%ga = tt.gather %x[%r] {axis = 0 : i32} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
%hist = tt.histogram %r : tensor<4xi32> -> tensor<2xi32>
%hm = tt.histogram %r, %m : tensor<4xi32> -> tensor<2xi32>
%bits = tt.bitcast %x : tensor<4xf32> -> tensor<4xi32>
%pi = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
%ip = tt.int_to_ptr %pi : i64 -> !tt.ptr<f32>
%f8 = tt.fp_to_fp %x, rounding = rtne : tensor<4xf32> -> tensor<4xf8E5M2>
%up = tt.fp_to_fp %f8 : tensor<4xf8E5M2> -> tensor<4xf32>
%cl = tt.clampf %x, %y, %up, propagateNan = all : tensor<4xf32>
%pd = tt.precise_divf %f, %g : f32
%ad = tt.approx_divf %f, %g : f32
%mh = tt.mulhiui %i, %j : i32
%ps = tt.precise_sqrt %f : f32
%ex = tt.extern_elementwise %f {libname = "", libpath = "", pure = true, symbol = "__nv_tanhf"} : (f32) -> f32
%asm = tt.elementwise_inline_asm "mov.b32 $0, $1;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %i : i32 -> i32
%rmw = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %x, %m : (tensor<4x!tt.ptr<f32>>, tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
%cas = tt.atomic_cas acq_rel, gpu, %q, %i, %j : (!tt.ptr<i32>, i32, i32) -> i32
%al = tt.atomic_load acquire, gpu, %q : (!tt.ptr<i32>) -> i32
tt.atomic_store release, sys, %q, %al : !tt.ptr<i32>
%poll = tt.atomic_poll acquire, gpu, %q, %al : !tt.ptr<i32>, i32 -> i1
%desc = tt.make_tensor_descriptor %p, [%i, %i], [%l, %l] : <f32>, <2x4xf32>
%dl = tt.descriptor_load %desc[%i, %i] : !tt.tensordesc<2x4xf32> -> tensor<2x4xf32>
tt.descriptor_store %desc[%i, %j], %dl : !tt.tensordesc<2x4xf32>, tensor<2x4xf32>
tt.descriptor_reduce add, %desc[%j, %i], %dl : !tt.tensordesc<2x4xf32>, tensor<2x4xf32>
%acc = arith.constant dense<0.000000e+00> : tensor<2x2xf32>
%dot = tt.dot %bc, %tr, %acc, inputPrecision = tf32 : tensor<2x4xf32> * tensor<4x2xf32> -> tensor<2x2xf32>
%ds = tt.dot_scaled %a8, %b8 scale %s8, %c32 lhs = e5m2 rhs = e4m3 {fastMath = false} : tensor<32x64xf8E5M2> * tensor<64x32xf8E4M3FN>, tensor<32x2xi8> -> tensor<32x32xf32>
tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %i : i32
tt.assert %m, "boom" : tensor<4xi1>
%red = "tt.reduce"(%x) <{axis = 0 : i32}> ({
^bb0(%ra: f32, %rb: f32):
  %s = arith.addf %ra, %rb : f32
  tt.reduce.return %s : f32
}) : (tensor<4xf32>) -> f32
%scan = "tt.scan"(%x) <{axis = 0 : i32, reverse = true}> ({
^bb0(%sa: f32, %sb: f32):
  %s_0 = arith.maxnumf %sa, %sb : f32
  tt.scan.return %s_0 : f32
}) : (tensor<4xf32>) -> tensor<4xf32>
%call = tt.call @helper(%i, %b) : (i32, i1) -> i32
%loop = scf.for %k = %c0 to %i step %j iter_args(%it = %f) -> (f32)  : i32 {
  %n = arith.addf %it, %g : f32
  scf.yield %n : f32
}
%ifr = scf.if %b -> (f32) {
  scf.yield %f : f32
} else {
  scf.yield %g : f32
}
%w = scf.while (%wa = %i) : (i32) -> (i32) {
  %wc = arith.cmpi slt, %wa, %j : i32
  scf.condition(%wc) %wa : i32
} do {
^bb0(%wb: i32):
  scf.yield %wb : i32
}
%me = "tt.map_elementwise"(%x, %y) <{pack = 1 : i32}> ({
^bb0(%ma: f32, %mb: f32):
  %mc = arith.cmpf ogt, %ma, %mb : f32
  cf.cond_br %mc, ^bb1(%ma : f32), ^bb1(%mb : f32)
^bb1(%mr: f32):
  tt.map_elementwise.return %mr : f32
}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
%poison = ub.poison : i32
cf.assert %b, "never"
ttg.barrier all
"""

_HELPER = """\
  tt.func private @helper(%a: i32, %c: i1) -> i32 {
    cf.cond_br %c, ^bb1(%a : i32), ^bb2
  ^bb1(%x: i32):
    cf.br ^bb2
  ^bb2:
    tt.return %a : i32
  }
"""

_ARGS = (
    "%f: f32, %g: f32, %i: i32, %j: i32, %b: i1, %l: i64, %h: f16, %p: !tt.ptr<f32>, %q: !tt.ptr<i32>, "
    "%a8: tensor<32x64xf8E5M2>, %b8: tensor<64x32xf8E4M3FN>, %s8: tensor<32x2xi8>, %c32: tensor<32x32xf32>"
)


def _indent(text: str, by: str) -> str:
    return "".join(by + line + "\n" for line in text.splitlines())


ALL_OPS = (
    "module {\n"
    f"  tt.func public @all({_ARGS}) {{\n"
    + _indent(_BODY + "\n".join(_family_lines()), "    ")
    + "    tt.return\n  }\n"
    + _HELPER
    + "}\n"
)
#: ops the Triton context of `cross_check` does not load
_OUTSIDE_TRITON = {"gpu.barrier", "llvm.intr.assume"}


def test_every_registered_op_round_trips_with_identical_text() -> None:
    m = parse_ttir(ALL_OPS)
    verify(m)
    assert print_module(m) == ALL_OPS
    assert print_module(parse_ttir(print_module(m))) == ALL_OPS
    seen = {type(op) for op in m.walk()}
    assert not [op for op in m.walk() if isinstance(op, UnknownOp)]
    builtin = {
        c
        for c in OP_CLASSES.values()
        if c.__module__.startswith("triton_backend_sdk.ir.dialects.") and not c.__module__.endswith(_SDK_ONLY)
    }
    assert {c.name for c in builtin - seen} <= _OUTSIDE_TRITON
    cross_check(ALL_OPS, m)


@pytest.mark.parametrize(
    "line",
    ['"gpu.barrier"() : () -> ()', "gpu.barrier", '"llvm.intr.assume"(%b) : (i1) -> ()'],
)
def test_ops_outside_tritons_context_round_trip(line: str) -> None:
    text = f"module {{\n  tt.func @k(%b: i1) {{\n    {line}\n    tt.return\n  }}\n}}\n"
    m = parse_ttir(text)
    verify(m)
    printed = print_module(m)
    assert print_module(parse_ttir(printed)) == printed
    assert not isinstance(m.ops[0].body.ops[0], UnknownOp)


def test_fields_read_segments_from_the_text() -> None:
    m = parse_ttir(ALL_OPS)
    ops = {type(op): op for op in m.walk()}
    ds = ops[O.DotScaled]
    assert ds.a_scale is None and ds.b_scale is ds.operands[3] and ds.c.type == TensorType((32, 32), f32)
    assert ds.a_elem_type == "e5m2" and ds.segment_sizes == (1, 1, 1, 0, 1)
    desc = ops[O.MakeTensorDescriptor]
    assert [v.name for v in desc.shape] == ["i", "i"] and [v.name for v in desc.strides] == ["l", "l"]
    st = ops[O.DescriptorStore]
    assert [v.name for v in st.indices] == ["i", "j"] and st.src.name == "dl"
    ld = [op for op in m.walk() if isinstance(op, O.Load)]
    assert ld[0].other is not None and ld[1].mask is None and ld[1].is_volatile
    br = ops[O.CondBr]
    assert br.true_args == [br.parent.parent.blocks[0].args[0]] and br.false_args == [] and br.true_dest.args
    split = ops[O.Split]
    assert split.out_lhs.name == "outLHS" and split.out_rhs.type == split.out_lhs.type
    assert ops[O.CmpI].predicate is CmpIPredicate.SLT and ops[O.GetNumPrograms].axis == 1
    assert ops[O.AtomicStore].sem is MemSemantic.RELEASE and ops[O.AtomicCAS].cmp.name == "i"
    assert ops[O.Scan].reverse and ops[O.Reduce].axis == 0 and ops[O.Call].callee == "helper"


def test_generic_form_carries_segment_sizes_and_properties() -> None:
    m = parse_ttir(ALL_OPS)
    load = next(op for op in m.walk() if isinstance(op, O.Load))
    load.cache = EnumAttr(O.CacheModifier.CG)
    text = print_module(m)
    generic = text.replace(
        "cf.cond_br %c, ^bb1(%a : i32), ^bb2",
        '"cf.cond_br"(%c, %a) [^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i1, i32) -> ()',
    )
    m2 = parse_ttir(generic)
    br2 = [op for op in m2.walk() if isinstance(op, O.CondBr)][-1]
    assert br2.segment_sizes == (1, 1, 0) and br2.true_args[0].name == "a"
    assert print_module(m2) == text
    x = next(op for op in m2.walk() if isinstance(op, O.Load))
    assert x.cache_modifier is O.CacheModifier.CG and "cacheModifier = cg" in text


def test_plain_op_subclass_reads_and_prints_in_generic_form() -> None:
    class Twice(Op):  # what a plugin declares: a name, nothing else
        name = "acme_test.twice"

    class Half(Op):  # a plugin op with declared fields but no syntax
        name = "acme_test.half"
        src = Operand()
        result = Result()

    O.register_op(Twice)
    O.register_op(Half)
    try:
        text = """module {
  tt.func @k(%a: f32) {
    %0 = "acme_test.twice"(%a) {k = 2 : i32} : (f32) -> f32
    %1 = acme_test.half %0 : f32
    tt.return
  }
}
"""
        m = parse_ttir(text)
        verify(m)
        twice, half, _ = m.ops[0].body.ops
        assert isinstance(twice, Twice) and isinstance(half, Half) and half.src is twice.result
        printed = print_module(m)
        assert '"acme_test.twice"(%a) {k = 2 : i32} : (f32) -> f32' in printed
        assert '"acme_test.half"(%0) : (f32) -> f32' in printed
        assert print_module(parse_ttir(printed)) == printed
    finally:
        del OP_CLASSES["acme_test.twice"], OP_CLASSES["acme_test.half"]


# ---------------------------------------------------------------------------------------------------------------------
# Builders and the rewriter


def _func(arg_types: list, body_ops: list[Op] | None = None) -> tuple[Module, O.Func, Block]:
    block = Block(arg_types, [f"a{i}" for i in range(len(arg_types))])
    f = O.Func(
        attrs={"sym_name": StringAttr("k"), "function_type": TypeAttr(FunctionType(tuple(arg_types), ()))},
        regions=[Region([block])],
    )
    return Module([f]), f, block


def test_typed_builders_infer_result_types() -> None:
    t = TensorType((8,), f32)
    _, _, block = _func([i32, t, PointerType(f32)])
    n, x, p = block.args
    c0 = block.append(O.Constant.from_int(0, i64))
    c1 = block.append(O.Constant.from_float(0.1, f32))
    splat = block.append(O.Constant.splat(2.0, t))
    neg = block.append(O.Constant.from_int(255, TensorType((8,), i8)))
    add = block.append(O.AddI.build(n, n))
    cmp = block.append(O.CmpI.build(CmpIPredicate.SLT, add.result, n))
    cmpt = block.append(O.CmpF.build(O.CmpFPredicate.OLT, x, splat.result))
    sel = block.append(O.Select.build(cmpt.result, x, splat.result))
    ext = block.append(O.ExtSI.build(n, i64))
    cast = block.append(
        O.SIToFP.build(
            block.append(O.MakeRange.build(start=0, end=8, result_types=[TensorType((8,), i32)])).result, f32
        )
    )
    mul = block.append(O.MulF.build(sel.result, splat.result))
    ld = block.append(O.Load.build(p, None, None, is_volatile=True))
    block.append(O.Return())
    assert c0.result.type == i64 and c0.value == O.IntegerAttr(0, i64)
    assert c1.value.value == pytest.approx(0.1, rel=1e-7) and c1.value.value != 0.1  # rounded to f32
    assert splat.value.values == (2.0,) and splat.result.type == t and neg.value.values == (-1,)
    assert add.result.type == i32 and cmp.result.type == i1 and cmp.predicate is CmpIPredicate.SLT
    assert cmpt.result.type == TensorType((8,), i1) and sel.result.type == t and mul.result.type == t
    assert ext.result.type == i64 and ld.result.type == f32 and ld.is_volatile and ld.mask is None
    assert cast.src.type == TensorType((8,), i32) and cast.result.type == t
    with pytest.raises(TypeError, match="result_types"):
        O.MakeRange.build(start=0, end=8)
    with pytest.raises(TypeError, match="no attribute field"):
        O.AddI.build(n, n, predicate=CmpIPredicate.EQ)


def test_builder_output_verifies_prints_and_reads_back() -> None:
    t = TensorType((4,), f32)
    m, _, block = _func([t, i1])
    x, c = block.args
    one = block.append(O.Constant.splat(1.0, t))
    two = block.append(O.AddF.build(x, one.result))
    sel = block.append(O.Select.build(c, two.result, x))
    block.append(O.Return())
    verify(m)
    text = print_module(m)
    assert "%0 = arith.constant dense<1.000000e+00> : tensor<4xf32>" in text
    assert "%2 = arith.select %a1, %1, %a0 : tensor<4xf32>" in text
    assert print_module(parse_ttir(text)) == text
    assert sel.condition is c


def test_plain_constructors_still_build_ops() -> None:
    m, _, block = _func([f32, f32])
    a, b = block.args
    mul = block.append(O.MulF([a, b], [f32]))
    block.append(O.Return())
    verify(m)
    assert mul.lhs is a and mul.rhs is b and mul.result.type == f32


def test_rewriter_inserts_replaces_and_erases() -> None:
    m, _, block = _func([f32, f32])
    a, b = block.args
    div = block.append(O.DivF.build(a, b))
    use = block.append(O.AddF.build(div.result, a))
    block.append(O.Return())
    rw = Rewriter.before(div)
    one = rw.insert(O.Constant.from_float(1.0, f32))
    recip = rw.build(O.DivF, one.result, b)
    mul = rw.build(O.MulF, a, recip.result)
    assert block.ops[:4] == [one, recip, mul, div]
    replace(div, mul)
    assert use.lhs is mul.result and div.parent is None and b.uses == [(recip, 1)]
    after = Rewriter.after(use)
    neg = after.build(O.NegF, use.result)
    neg2 = after.build(O.NegF, neg.result)
    assert block.ops.index(neg2) == block.ops.index(neg) + 1 == block.ops.index(use) + 2
    Rewriter.replace_all_uses(use.result, a)
    assert not use.result.uses and neg.src is a
    insert_after(neg2, O.Constant.from_int(3, i32))
    verify(m)
    with pytest.raises(AssertionError, match="still used"):
        Rewriter.erase(recip)
    with pytest.raises(ValueError, match="1 result"):
        replace(mul, [a, b])


# ---------------------------------------------------------------------------------------------------------------------
# Verifier errors name the op


def _verify_error(build: object) -> str:
    m, _, block = _func([f32, i32, PointerType(f32)])
    build(block, *block.args)  # type: ignore[operator]
    block.append(O.Return())
    with pytest.raises(IRVerificationError) as info:
        verify(m)
    return str(info.value)


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda bl, f, i, p: bl.append(O.AddI([i, i, i], [i32])), ["arith.addi", "3 operands", "lhs, rhs"]),
        (lambda bl, f, i, p: bl.append(O.AddF([f, f], [f32, f32])), ["arith.addf", "2 results, expected 1"]),
        (lambda bl, f, i, p: bl.append(O.AddF([f, i], [f32])), ["arith.addf", "one type", "f32, i32"]),
        (lambda bl, f, i, p: bl.append(O.AddI([f, f], [f32])), ["arith.addi", "integer"]),
        (lambda bl, f, i, p: bl.append(O.CmpI([i, i], [i1])), ["arith.cmpi", "lacks", "predicate"]),
        (
            lambda bl, f, i, p: bl.append(O.CmpI([i, i], [i1], {"predicate": IntegerAttr(2, i64)})),
            ["arith.cmpi", "'predicate'", "EnumAttr"],
        ),
        (lambda bl, f, i, p: bl.append(O.CmpI.build(CmpIPredicate.EQ, i, i, result_types=[i32])), ["i1-valued"]),
        (lambda bl, f, i, p: bl.append(O.Load([p], [i32])), ["tt.load", "loads i32 through !tt.ptr<f32>"]),
        (lambda bl, f, i, p: bl.append(O.Store([p, i], [])), ["tt.store", "stores i32"]),
        (lambda bl, f, i, p: bl.append(O.Select([i, f, f], [f32])), ["arith.select", "condition of type i32"]),
        (lambda bl, f, i, p: bl.append(O.ExtSI.build(i, index)), None),
        (
            lambda bl, f, i, p: bl.append(O.Constant.build(value=IntegerAttr(1, i64), result_types=[i32])),
            ["arith.constant", "value of type i64"],
        ),
        (lambda bl, f, i, p: bl.append(O.Call([i], [], {"callee": O.SymbolRefAttr("nope")})), ["tt.call", "@nope"]),
        (lambda bl, f, i, p: bl.append(O.AddPtr([p, f], [p.type])), ["tt.addptr", "integer offset"]),
    ],
)
def test_verifier_errors_name_the_op(build: object, words: list[str] | None) -> None:
    if words is None:  # a well-formed op: no error
        m, _, block = _func([f32, i32, PointerType(f32)])
        build(block, *block.args)  # type: ignore[operator]
        block.append(O.Return())
        verify(m)
        return
    msg = _verify_error(build)
    for w in words:
        assert w in msg, msg


def test_verifier_checks_successors() -> None:
    m, _, block = _func([i1])
    block.append(O.Br([], []))
    with pytest.raises(IRVerificationError, match="cf.br: has 0 successors, expected 1"):
        verify(m)


def test_verifier_checks_segments() -> None:
    def bad(bl: Block, f: object, i: object, p: object) -> None:
        ld = bl.append(O.Load([p], [f32]))
        ld.segment_sizes = (1, 1, 0)

    assert "segment sizes [1, 1, 0] do not fit its 1 operands" in _verify_error(bad)


def test_libm_ops_round_trip_in_generic_form() -> None:
    from triton_backend_sdk.ir.dialects.libm import LIBM_OPS

    lines = []
    for k, cls in enumerate(LIBM_OPS):
        args = ", ".join("%f" if s == "f" else "%i" for s in cls.signature)
        types = ", ".join("f32" if s == "f" else "i32" for s in cls.signature)
        lines.append(f'    %{k} = "{cls.name}"({args}) : ({types}) -> f32\n')
    text = "module {\n  tt.func @k(%f: f32, %i: i32) {\n" + "".join(lines) + "    tt.return\n  }\n}\n"
    m = parse_ttir(text)
    verify(m)
    assert print_module(m) == text
    jn = next(op for op in m.walk() if op.name == "libm.jn")
    assert jn.n.name == "i" and jn.x.name == "f"
