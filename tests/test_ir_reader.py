"""Tests of the TTIR reader (and the verifier) against real TTIR from the kernel corpus.

The oracle is Triton's own MLIR parser through its Python bindings: for every corpus kernel the reader must produce
the same ops in the same order, the same operand -> producer links and the same result types. The bindings cannot
return float constants, `tt.trans` orders, cache policies or locations, so targeted tests cover those.
"""

from __future__ import annotations

import inspect
import math
import time
from pathlib import Path

import pytest
import triton
import ttir_corpus
from triton_backend_sdk.ir import (
    Block,
    BlockArgument,
    BoolAttr,
    DenseArrayAttr,
    DenseAttr,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    IntType,
    IRVerificationError,
    Location,
    Module,
    OpaqueAttr,
    PointerType,
    StringAttr,
    TensorDescType,
    TensorType,
    TTIRParseError,
    UnitAttr,
    UnknownOp,
    parse_attribute,
    parse_ttir,
    parse_type,
    verify,
)
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Op
from triton_backend_sdk.ir.enums import (
    CacheModifier,
    CmpFPredicate,
    CmpIPredicate,
    EvictionPolicy,
    InputPrecision,
    MemSemantic,
    MemSyncScope,
    PaddingOption,
    ProgramDim,
    PropagateNan,
    RMWOp,
    RoundingMode,
)
from triton_backend_sdk.ir.types import f32, i1, i32
from ttir_corpus import CORPUS, CORPUS_BY_NAME, SNIPPETS, cross_check, ttir_text

CORPUS_FILE = str(Path(ttir_corpus.__file__).resolve())
TRITON_39 = tuple(int(x) for x in triton.__version__.split(".")[:2]) >= (3, 9)
NAMES = [e.name for e in CORPUS]


def module_of(name: str) -> Module:
    return parse_ttir(ttir_text(CORPUS_BY_NAME[name]))


def ops_named(m: Module, name: str) -> list[Op]:
    return [op for op in m.walk() if op.op_name == name]


def line_of(fn: object, snippet: str) -> int:
    """1-based line in the corpus file of the first line of `fn` containing `snippet`."""
    lines, start = inspect.getsourcelines(getattr(fn, "fn", fn))  # a JITFunction wraps the Python function
    for i, text in enumerate(lines):
        if snippet in text:
            return start + i
    raise AssertionError(f"{snippet!r} not in {fn}")


# ---------------------------------------------------------------------------------------------------------------------
# Whole-corpus tests


def test_corpus_is_varied() -> None:
    assert len(CORPUS) >= 16
    seen = {op.op_name for name in NAMES for op in module_of(name).walk()}
    for needed in [
        "tt.reduce",
        "tt.scan",
        "tt.dot",
        "tt.atomic_rmw",
        "tt.atomic_cas",
        "tt.cat",
        "tt.join",
        "tt.split",
        "tt.trans",
        "tt.reshape",
        "tt.gather",
        "tt.histogram",
        "tt.fp_to_fp",
        "tt.extern_elementwise",
        "tt.print",
        "tt.assert",
        "tt.call",
        "tt.make_tensor_descriptor",
        "tt.descriptor_load",
        "tt.descriptor_store",
        "tt.get_num_programs",
        "tt.clampf",
        "tt.mulhiui",
        "tt.bitcast",
        "tt.int_to_ptr",
        "tt.ptr_to_int",
        "tt.elementwise_inline_asm",
        "tt.precise_sqrt",
        "tt.precise_divf",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.condition",
        "arith.select",
        "arith.cmpf",
        "math.fma",
    ]:
        assert needed in seen, needed
    assert len(seen) >= 77


@pytest.mark.parametrize("name", NAMES)
def test_corpus_kernel_parses_and_verifies(name: str) -> None:
    m = module_of(name)
    verify(m)
    ops = list(m.walk())
    assert not [op for op in ops if isinstance(op, UnknownOp)]
    # callsite locations resolve to the caller, so every known position is in the kernel's own file
    locs = [op.loc for op in ops if op.loc is not None]
    assert len(locs) >= 0.8 * len(ops)
    assert {loc.file for loc in locs} == {CORPUS_FILE}


@pytest.mark.parametrize("name", NAMES)
def test_corpus_kernel_matches_triton_parser(name: str) -> None:
    text = ttir_text(CORPUS_BY_NAME[name])
    cross_check(text, parse_ttir(text))


def test_parse_speed() -> None:
    texts = [ttir_text(e) for e in CORPUS]
    start = time.perf_counter()
    for t in texts:
        parse_ttir(t)
    per_kernel_ms = (time.perf_counter() - start) / len(texts) * 1000
    assert per_kernel_ms < 25, per_kernel_ms  # ~1-3 ms on a laptop core; generous for loaded CI machines


# ---------------------------------------------------------------------------------------------------------------------
# Constants


def test_hex_float_splats_are_bit_patterns() -> None:
    m = module_of("masked_load_other")
    values = {}
    for c in ops_named(m, "arith.constant"):
        a = c.attrs["value"]
        if isinstance(a, DenseAttr) and a.type.elem == f32:
            assert a.is_splat and a.type == TensorType((64,), f32)
            values[c.result.name] = a.values[0]
    assert values["a"] == -math.inf  # dense<0xFF800000>
    assert math.isnan(values["c"])  # dense<0x7FC00000>
    assert values["b"] == 0.0 and math.copysign(1.0, values["b"]) == 1.0


def test_scalar_constants() -> None:
    text = SNIPPETS["constants"]
    m = parse_ttir(text)
    v = {c.result.name: c.attrs["value"] for c in ops_named(m, "arith.constant")}
    assert v["a"] == FloatAttr(0.10000000149011612, f32)  # the exact f32 value
    assert math.isnan(v["b"].value) and v["b"].type == f32
    assert v["c"].value == -math.inf
    assert v["d"].value == 1.5 and str(v["d"].type) == "f64"
    assert v["e"] == IntegerAttr(-2147483648, IntType(64))
    assert v["f"] == IntegerAttr(-1, IntType(8))  # signless bit pattern read back as signed
    assert v["t"] == IntegerAttr(1, i1)
    assert v["g"].value == 1.0
    assert v["h"].values == (1, 2, 3, 4) and not v["h"].is_splat
    assert v["i"].values[:2] == (1.5, 2.0) and v["i"].values[2] == math.inf
    assert math.copysign(1.0, v["i"].values[3]) == -1.0
    assert v["j"].values == (1,) and v["j"].is_splat
    assert v["k"].values == (1.0, 2.0)
    assert v["l"].value == pytest.approx(1 / 3, rel=1e-7)
    for c in ops_named(m, "arith.constant"):
        assert c.result.type == c.attrs["value"].type


def test_integer_and_float_constants_in_corpus() -> None:
    m = module_of("noinline_call")
    helper = next(f for f in ops_named(m, "tt.func") if not f.is_public)
    (cst,) = [op for op in helper.walk() if isinstance(op, O.Constant)]
    assert cst.value == FloatAttr(2.0, f32)
    m = module_of("print_assert")
    ints = {c.result.name: c.value for c in ops_named(m, "arith.constant") if isinstance(c.value, IntegerAttr)}
    assert ints["c-2147483648_i64"] == IntegerAttr(-2147483648, IntType(64))
    assert ints["offs"] == IntegerAttr(16, IntType(64))


# ---------------------------------------------------------------------------------------------------------------------
# Op-specific representation


def test_cmpi_on_tensors_gives_i1_tensors_and_predicate() -> None:
    m = module_of("vector_add")
    (cmp,) = ops_named(m, "arith.cmpi")
    assert isinstance(cmp, O.CmpI)
    assert cmp.attrs["predicate"] == EnumAttr(CmpIPredicate.SLT) and cmp.predicate is CmpIPredicate.SLT
    assert cmp.result.type == TensorType((128,), i1)
    preds = {c.predicate for c in ops_named(module_of("argmax_reduce"), "arith.cmpf")}
    assert preds == {CmpFPredicate.OEQ, CmpFPredicate.OGT, CmpFPredicate.OLT}


def test_trans_order_and_reshape_flags() -> None:
    m = module_of("shape_ops")
    orders = [t.attrs["order"] for t in ops_named(m, "tt.trans")]
    assert orders == [DenseArrayAttr(i32, (1, 0)), DenseArrayAttr(i32, (2, 0, 1))]
    assert ops_named(m, "tt.trans")[1].order == (2, 0, 1)
    flags = [r.allow_reorder for r in ops_named(m, "tt.reshape")]
    assert flags.count(True) == 1 and ops_named(m, "tt.reshape")[-1].attrs["allow_reorder"] == UnitAttr()
    (split,) = ops_named(m, "tt.split")
    assert [r.name for r in split.results] == ["outLHS", "outRHS"]
    assert [r.type for r in split.results] == [TensorType((32,), f32)] * 2


def test_program_ids_and_num_programs() -> None:
    m = module_of("grid_3d")
    axes = [(op.op_name, op.attrs["axis"]) for op in m.walk() if op.op_name.startswith("tt.get_")]
    assert [a for _, a in axes] == [EnumAttr(d) for d in (ProgramDim.X, ProgramDim.Y, ProgramDim.Z)] * 2
    assert [op.axis for op in ops_named(m, "tt.get_num_programs")] == [0, 1, 2]


def test_loads_stores_and_cache_policies() -> None:
    m = module_of("masked_load_other")
    loads = ops_named(m, "tt.load")
    assert [len(ld.operands) for ld in loads] == [3, 3, 3]
    assert all(ld.result.type == TensorType((64,), f32) for ld in loads)
    if TRITON_39:
        assert loads[1].attrs["cachePolicy"] == OpaqueAttr(
            "#tt.cache_policy<cache_modifier = cg, eviction_policy = evict_last>"
        )
    else:  # 3.7: `cacheModifier = cg evictionPolicy = evict_last`
        assert loads[1].attrs["cache"] == EnumAttr(CacheModifier.CG)
    assert (loads[1].cache_modifier, loads[1].eviction_policy) == (CacheModifier.CG, EvictionPolicy.EVICT_LAST)
    assert loads[2].is_volatile and loads[2].attrs["isVolatile"] == BoolAttr(True)
    assert loads[0].cache_modifier is CacheModifier.NONE
    (store,) = ops_named(m, "tt.store")
    assert store.cache_modifier is CacheModifier.WB and store.mask is store.operands[2]
    assert "operandSegmentSizes" not in loads[0].attrs


def test_atomics() -> None:
    m = module_of("atomics")
    rmws = ops_named(m, "tt.atomic_rmw")
    assert [(a.rmw_op, a.sem, a.scope) for a in rmws] == [
        (RMWOp.FADD, MemSemantic.ACQUIRE_RELEASE, MemSyncScope.GPU),
        (RMWOp.MAX, MemSemantic.RELAXED, MemSyncScope.CTA),
        (RMWOp.XCHG, MemSemantic.RELEASE, MemSyncScope.SYSTEM),
        (RMWOp.ADD, MemSemantic.ACQUIRE_RELEASE, MemSyncScope.GPU),
    ]
    assert rmws[0].result.type == TensorType((32,), f32) and rmws[2].result.type == i32
    (cas,) = ops_named(m, "tt.atomic_cas")
    assert cas.attrs["sem"] == EnumAttr(MemSemantic.ACQUIRE_RELEASE) and len(cas.operands) == 3


def test_dot_fp_to_fp_clampf_and_friends() -> None:
    dots = ops_named(module_of("dot_fp32"), "tt.dot")
    assert "inputPrecision" not in dots[0].attrs and dots[0].input_precision is InputPrecision.IEEE
    assert dots[1].attrs["inputPrecision"] == EnumAttr(InputPrecision.TF32)
    (dot16,) = ops_named(module_of("dot_fp16"), "tt.dot")
    assert str(dot16.operands[0].type) == "tensor<32x16xf16>" and str(dot16.result.type) == "tensor<32x32xf32>"
    casts = ops_named(module_of("fp8_casts"), "tt.fp_to_fp")
    assert [c.attrs.get("rounding") for c in casts] == [EnumAttr(RoundingMode.RTNE)] * 2 + [
        EnumAttr(RoundingMode.RTZ),
        None,
    ]
    assert [str(c.result.type) for c in casts] == [
        "tensor<32xf8E5M2>",
        "tensor<32xf8E4M3FN>",
        "tensor<32xf16>",
        "tensor<32xf16>",
    ]
    m = module_of("where_clamp_bits")
    assert [c.propagate_nan for c in ops_named(m, "tt.clampf")] == [PropagateNan.NONE, PropagateNan.ALL]
    (asm,) = ops_named(m, "tt.elementwise_inline_asm")
    assert asm.attrs["asm_string"] == StringAttr("mov.b32 $0, $1;")
    assert asm.attrs["packed_element"] == IntegerAttr(1, i32) and asm.attrs["pure"] == BoolAttr(True)
    ext = ops_named(module_of("extern_math"), "tt.extern_elementwise")
    assert [e.symbol for e in ext] == ["__nv_tanhf", "__nv_powf"]


def test_print_assert_gather_histogram() -> None:
    m = module_of("print_assert")
    prints = ops_named(m, "tt.print")
    assert [p.prefix for p in prints] == [" x=: ", " pid: "] and [p.hex for p in prints] == [False, True]
    assert prints[1].attrs["isSigned"] == DenseArrayAttr(i32, (1,))
    assert "x must be non-negative" in [a.message for a in ops_named(m, "tt.assert")]
    m = module_of("gather_hist")
    (g,) = ops_named(m, "tt.gather")
    assert g.axis == 0 and g.result.type == TensorType((32,), f32)
    h = ops_named(m, "tt.histogram")
    assert [len(x.operands) for x in h] == [1, 2] and h[0].result.type == TensorType((8,), i32)


def test_tensor_descriptors() -> None:
    m = module_of("tensor_desc")
    descs = ops_named(m, "tt.make_tensor_descriptor")
    assert descs[0].result.type == TensorDescType(TensorType((32, 32), f32))
    assert descs[0].attrs["padding"] == EnumAttr(PaddingOption.PAD_NAN)
    assert str(descs[2].result.type) == "!tt.tensordesc<32x32xui32>"
    assert descs[0].base.name == "a_ptr" and [v.name for v in descs[0].shape] == ["M", "N"]
    stores = ops_named(m, "tt.descriptor_store")
    assert all(
        s.desc.type == TensorDescType(s.src.type if s.src.type.elem == f32 else TensorType((32, 32), IntType(32, "u")))
        for s in stores
    )
    assert [len(s.indices) for s in stores] == [2, 2]


def test_function_signature_and_call() -> None:
    m = module_of("vector_add")
    (f,) = m.ops
    assert isinstance(f, O.Func) and f.sym_name == "vector_add" and f.is_public
    assert [a.name for a in f.args] == ["x_ptr", "y_ptr", "out_ptr", "n"]
    assert f.function_type.inputs == (PointerType(f32),) * 3 + (i32,)
    assert f.arg_attr(0, "tt.divisibility") == IntegerAttr(16, i32)
    assert f.arg_attr(2, "tt.divisibility") is None
    assert f.attrs["noinline"] == BoolAttr(False)
    loc = f.args[0].loc
    assert loc is not None and (loc.file, loc.name) == (CORPUS_FILE, "x_ptr")
    assert loc.line == line_of(ttir_corpus.vector_add, "def vector_add")
    m = module_of("noinline_call")
    (call,) = ops_named(m, "tt.call")
    helper = m.ops[1]
    assert call.callee == helper.sym_name and not helper.is_public and helper.attrs["noinline"] == BoolAttr(True)
    assert [v.type for v in call.operands] == list(helper.function_type.inputs)


# ---------------------------------------------------------------------------------------------------------------------
# Locations


def test_locations_point_at_kernel_lines() -> None:
    m = module_of("vector_add")
    loads = ops_named(m, "tt.load")
    loc = loads[0].loc
    assert loc is not None and (loc.file, loc.line, loc.name) == (
        CORPUS_FILE,
        line_of(ttir_corpus.vector_add, "x = tl.load"),
        "x",
    )
    assert loc.col == (9 if TRITON_39 else 16)  # 3.9 points at the assignment, 3.7 at the call
    (store,) = ops_named(m, "tt.store")
    assert store.loc is not None and store.loc.line == line_of(ttir_corpus.vector_add, "tl.store")
    assert store.loc.name is None


def test_callsite_locations_resolve_to_the_callers_line() -> None:
    """Ops of tl.max's combine function (defined in triton/language/standard.py) report the kernel line."""
    m = module_of("softmax")
    red = ops_named(m, "tt.reduce")[0]
    line = line_of(ttir_corpus.softmax, "tl.max(x, axis=0)")
    assert red.loc is not None and red.loc.line == line and red.loc.file == CORPUS_FILE
    combine = red.regions[0].blocks[0]
    assert all(a.loc is not None and a.loc.line == line for a in combine.args)
    assert all(op.loc is not None and op.loc.line == line and op.loc.file == CORPUS_FILE for op in combine.ops)


def test_location_forms() -> None:
    text = SNIPPETS["locations"]
    m = parse_ttir(text)
    f = m.ops[0]
    adds = ops_named(m, "arith.addi")
    assert [op.loc for op in adds] == [
        Location("k.py", 7, 3),
        Location("k.py", 8, 4),
        None,
        Location("k.py", 7, 3, "named"),
        Location("k.py", 9, 2),
        None,
    ]
    assert f.args[0].loc == Location("k.py", 7, 3, "x")
    assert f.body.ops[-1].loc is None  # tt.return without a location


# ---------------------------------------------------------------------------------------------------------------------
# Control flow


def test_implicit_yield_is_inserted() -> None:
    m = module_of("if_else")
    ifs = ops_named(m, "scf.if")
    with_results, without = ifs
    assert len(with_results.results) == 2 and with_results.else_block is not None
    assert without.else_block is None and not without.results
    term = without.then_block.ops[-1]
    assert isinstance(term, O.Yield) and not term.operands and term.loc == without.loc
    loops = ops_named(module_of("for_loop"), "scf.for")
    assert [len(f.results) for f in loops] == [2, 1, 0]
    assert isinstance(loops[2].body.ops[-1], O.Yield) and loops[2].attrs["tt.num_stages"] == IntegerAttr(3, i32)
    iv = loops[0].body.args[0]
    assert iv.name == "i" and iv.type == i32 and iv.loc == loops[0].loc
    assert [a.name for a in loops[0].body.args[1:]] == ["acc_1", "cnt_2"]
    assert [r.name for r in loops[0].results] == ["cnt", "cnt"]


def test_while_loop() -> None:
    m = module_of("while_loop")
    (w,) = ops_named(m, "scf.while")
    assert isinstance(w, O.While) and len(w.results) == 2
    assert isinstance(w.before.ops[-1], O.Condition) and isinstance(w.after.ops[-1], O.Yield)
    assert [a.name for a in w.after.args] == ["i_1", "total_2"]
    if TRITON_39:  # 3.7 prints these as `loc("total")`: a name without a position, read as no location
        assert w.after.args[1].loc is not None and w.after.args[1].loc.name == "total"
    (w2,) = ops_named(module_of("atomics"), "scf.while")
    assert not w2.operands and not w2.results


def test_generic_form_reduce_with_multi_operand_combine() -> None:
    m = module_of("argmax_reduce")
    reds = ops_named(m, "tt.reduce")
    arg = reds[0]
    assert isinstance(arg, O.Reduce) and arg.axis == 1 and len(arg.operands) == 2 and len(arg.results) == 2
    assert [r.type for r in arg.results] == [TensorType((4,), f32), TensorType((4,), i32)]
    assert [a.type for a in arg.combine.args] == [f32, i32, f32, i32]
    ret = arg.combine.ops[-1]
    assert isinstance(ret, O.ReduceReturn) and len(ret.operands) == 2
    scans = ops_named(module_of("scan"), "tt.scan")
    assert [s.reverse for s in scans] == [False, True] and scans[1].combine.args[0].loc is None


def test_unstructured_control_flow_with_forward_references() -> None:
    text = SNIPPETS["cf_forward"]
    m = parse_ttir(text)
    verify(m)
    f = m.ops[0]
    blocks = f.regions[0].blocks
    assert [b.label for b in blocks] == [None, "bb2", "bb1", "bb3"]
    br = blocks[0].ops[-1]
    assert isinstance(br, O.CondBr) and br.successors == [blocks[2], blocks[3]]
    assert br.segment_sizes == (1, 1, 0) and "operandSegmentSizes" not in br.attrs
    assert br.true_dest is blocks[2] and br.true_args == [blocks[0].args[0]] and br.false_args == []
    add = blocks[1].ops[0]
    assert add.operands[0] is blocks[2].ops[0].result and add.operands[1] is blocks[2].args[0]
    assert blocks[2].ops[0].result.uses == [(add, 0)]
    cross_check(text, m)


# ---------------------------------------------------------------------------------------------------------------------
# Triton 3.7 spellings, unknown ops, errors


def test_triton_37_spellings() -> None:
    m = parse_ttir(SNIPPETS["ttir37"])
    verify(m)
    (ld,) = ops_named(m, "tt.load")
    assert ld.attrs["cache"] == EnumAttr(CacheModifier.CG) and ld.attrs["evict"] == EnumAttr(EvictionPolicy.EVICT_LAST)
    assert (ld.cache_modifier, ld.eviction_policy) == (CacheModifier.CG, EvictionPolicy.EVICT_LAST)
    (st,) = ops_named(m, "tt.store")
    assert st.cache_modifier is CacheModifier.WB and st.eviction_policy is EvictionPolicy.NORMAL
    (desc,) = ops_named(m, "tt.make_tensor_descriptor")
    assert desc.result.type == TensorDescType(TensorType((32, 32), f32))
    assert parse_type("!tt.tensordesc<tensor<32x32xf32>>") == parse_type("!tt.tensordesc<32x32xf32>")
    assert ld.loc == Location("k.py", 3, 10, "x")


def test_triton_39_only_ops_and_rare_spellings() -> None:
    text = SNIPPETS["misc39"]
    m = parse_ttir(text)
    verify(m)
    assert not [op for op in m.walk() if isinstance(op, UnknownOp)]
    (ld,) = ops_named(m, "tt.atomic_load")
    assert (ld.sem, ld.scope, ld.result.type) == (MemSemantic.ACQUIRE, MemSyncScope.GPU, i32)
    (st,) = ops_named(m, "tt.atomic_store")
    assert st.scope is MemSyncScope.SYSTEM and st.value is ld.result
    (poll,) = ops_named(m, "tt.atomic_poll")
    assert poll.result.type == i1
    (red,) = ops_named(m, "tt.descriptor_reduce")
    assert red.attrs["kind"] == OpaqueAttr("add") and red.operands[1] is ops_named(m, "tt.descriptor_load")[0].result
    (loop,) = ops_named(m, "scf.for")
    assert loop.unsigned_cmp and loop.attrs["unsignedCmp"] == UnitAttr()
    assert ops_named(m, "tt.reshape")[0].attrs["efficient_layout"] == UnitAttr()
    (unsplat,) = ops_named(m, "tt.unsplat")
    assert unsplat.result.type == i32
    assert str(ops_named(m, "arith.index_cast")[0].result.type) == "index"
    assert ops_named(m, "cf.assert")[0].attrs["message"] == StringAttr("acc < poll")
    if TRITON_39:
        cross_check(text, m)


def test_generic_form_of_known_ops_normalizes_enums() -> None:
    text = SNIPPETS["generic_known"]
    m = parse_ttir(text)
    cmp, pid, ld = [op for op in m.walk() if not isinstance(op, (O.Func, O.Return))]
    assert cmp.predicate is CmpIPredicate.SLT and pid.attrs["axis"] == EnumAttr(ProgramDim.Z)
    assert ld.cache_modifier is CacheModifier.CG and "operandSegmentSizes" not in ld.attrs


def test_unknown_ops_are_kept() -> None:
    text = SNIPPETS["unknown_ops"]
    m = parse_ttir(text)
    unknown = [op for op in m.walk() if isinstance(op, UnknownOp)]
    assert [u.op_name for u in unknown] == ["foo.generic", "foo.yield", "foo.custom", "foo.pair", "foo.ty"]
    gen, _, custom, pair, ty = unknown
    assert gen.attrs == {"bar": IntegerAttr(1, i32), "baz": UnitAttr()} and gen.result.type == i32
    assert custom.operands == [m.ops[0].args[0], gen.result] and custom.attrs["q"] == StringAttr("s")
    assert [r.type for r in pair.results] == [i32, f32]
    assert str(ty.result.type) == "vector<4xi32>"


def test_attributes_and_types_standalone() -> None:
    assert parse_type("tensor<4x!tt.ptr<f32, 3>>") == TensorType((4,), PointerType(f32, 3))
    const = parse_type('!tt.ptr<f32, "constant">')  # a tl.const pointer argument
    assert const == PointerType(f32, "constant") and str(const) == '!tt.ptr<f32, "constant">'
    assert str(parse_type("(i32, !tt.ptr<f16>) -> (f32, i1)")) == "(i32, !tt.ptr<f16>) -> (f32, i1)"
    assert parse_attribute("array<i32: 1, 0>") == DenseArrayAttr(i32, (1, 0))
    dense = parse_attribute("dense<0xFF800000> : tensor<4x8xf32>")
    assert isinstance(dense, DenseAttr) and dense.values == (-math.inf,) and dense.type.shape == (4, 8)
    assert parse_attribute("#arith.fastmath<fast>") == OpaqueAttr("#arith.fastmath<fast>")


def test_fastmath_is_kept() -> None:
    text = SNIPPETS["fastmath"]
    add, cmp = [op for op in parse_ttir(text).walk() if op.op_name.startswith("arith")]
    assert add.attrs["fastmath"] == OpaqueAttr("#arith.fastmath<fast>")
    assert cmp.attrs["fastmath"] == OpaqueAttr("#arith.fastmath<nnan>") and cmp.result.type == i1


@pytest.mark.parametrize(
    ("text", "line", "col", "words"),
    [
        (
            "module {\n  tt.func @k() {\n    %0 = tt.splat %nope : i32 -> tensor<4xi32>\n    tt.return\n  }\n}\n",
            3,
            19,
            ["undefined value %nope"],
        ),
        (
            "module {\n  tt.func @k(%a: i32) {\n    %0 = arith.addi %a, %a : tensor<4xfoo>\n  }\n}\n",
            3,
            39,
            ["arith.addi", "unknown type 'foo'"],
        ),
        (
            "module {\n  tt.func @k(%a: i32) {\n    %0 = foo.bar %a weird stuff : i32\n  }\n}\n",
            3,
            21,
            ["foo.bar", "custom syntax", "weird stuff"],
        ),
        ("module {\n  tt.func @k(%a: i32) {\n    %0 = tt.load %a : i32 extra\n  }\n}\n", 3, 27, ["tt.load"]),
        ("module {\n  tt.func @k(%a: i1) {\n    cf.br ^nowhere\n  }\n}\n", 3, 11, ["undefined block ^nowhere"]),
        (
            "module {\n  tt.func @k(%a: i32) {\n    %0 = arith.cmpi bogus, %a, %a : i32\n  }\n}\n",
            3,
            21,
            ["arith.cmpi", "CmpIPredicate"],
        ),
        ("module {\n  tt.func @k(%a: i32) {\n    tt.return loc(#nope)\n  }\n}\n", 3, 19, ["#nope"]),
    ],
)
def test_parse_errors_name_line_and_column(text: str, line: int, col: int, words: list[str]) -> None:
    with pytest.raises(TTIRParseError) as info:
        parse_ttir(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.line, err.col) == (line, col), str(err)
    for w in words:
        assert w in str(err)


# ---------------------------------------------------------------------------------------------------------------------
# Verifier


def _func(m: Module) -> O.Func:
    f = m.ops[0]
    assert isinstance(f, O.Func)
    return f


def test_verifier_rejects_use_before_definition() -> None:
    m = module_of("vector_add")
    body = _func(m).body
    load = ops_named(m, "tt.load")[0]
    body.remove(load)
    body.insert(0, load)
    with pytest.raises(IRVerificationError) as info:
        verify(m)
    assert "tt.load" in str(info.value) and "vector_add" not in str(info.value)
    assert f"{CORPUS_FILE}:{line_of(ttir_corpus.vector_add, 'x = tl.load')}" in str(info.value)


def test_verifier_rejects_missing_terminator_and_bad_yield() -> None:
    m = module_of("for_loop")
    loop = ops_named(m, "scf.for")[1]
    y = loop.body.ops[-1]
    y.erase()
    with pytest.raises(IRVerificationError, match="scf.for.*terminator"):
        verify(m)
    m = module_of("for_loop")
    loop = ops_named(m, "scf.for")[1]
    y = loop.body.ops[-1]
    y.set_operand(0, loop.body.args[0])  # yields the i32 induction variable for a tensor iter_arg
    with pytest.raises(IRVerificationError, match="yields"):
        verify(m)


def test_verifier_rejects_stale_uses_and_unknown_callee() -> None:
    m = module_of("vector_add")
    add = ops_named(m, "arith.addf")[0]
    add.operands[0].uses.clear()
    with pytest.raises(IRVerificationError, match="use list"):
        verify(m)
    m = module_of("noinline_call")
    m.ops[1].attrs["sym_name"] = StringAttr("renamed")
    with pytest.raises(IRVerificationError, match="tt.call.*not a function"):
        verify(m)


def test_verifier_rejects_values_from_another_function() -> None:
    m = module_of("noinline_call")
    kernel, helper = m.ops
    store = next(op for op in helper.walk() if isinstance(op, O.Store))
    store.set_operand(0, kernel.args[0])
    with pytest.raises(IRVerificationError, match="tt.store.*not defined before"):
        verify(m)


def test_verifier_accepts_hand_built_ir() -> None:
    from triton_backend_sdk.ir import FunctionType, Region, TypeAttr

    body = Block([i32, i32])
    add = body.append(O.AddI([body.args[0], body.args[1]], [i32]))
    body.append(O.Return([add.result]))
    f = O.Func(
        attrs={"sym_name": StringAttr("f"), "function_type": TypeAttr(FunctionType((i32, i32), (i32,)))},
        regions=[Region([body])],
    )
    m = Module([f])
    verify(m)
    assert isinstance(body.args[0], BlockArgument)
