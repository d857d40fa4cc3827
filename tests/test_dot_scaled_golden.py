"""Golden SDK IR of the shared `tt.dot_scaled` decomposition (sdk/transforms/dot_scaled.py): what it emits for fp4
unpacking, e8m0 scales and their broadcast along K, and where it leaves the op to a backend's own rule."""

from __future__ import annotations

import pytest
from golden_ir import check_lines
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import PassContext
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.dot_scaled import DecomposeDotScaled


def _decompose(body: str, args: str) -> str:
    module = parse_ttir(f"module {{\n  tt.func public @k({args}) {{\n{body}\n    tt.return\n  }}\n}}")
    DecomposeDotScaled().run(module, PassContext(Options(), None, {}))  # type: ignore[arg-type]
    verify(module)
    text = print_module(module)
    assert "tt.dot_scaled" not in text
    return text


def test_fp4_lhs_scaled_bf16_rhs():
    text = _decompose(
        "    %d = tt.dot_scaled %a scale %s, %b, %c lhs = e2m1 rhs = bf16 {fastMath = false} : tensor<16x16xi8>, "
        "tensor<16x1xi8> * tensor<32x16xbf16> -> tensor<16x16xf32>",
        "%a: tensor<16x16xi8>, %s: tensor<16x1xi8>, %b: tensor<32x16xbf16>, %c: tensor<16x16xf32>",
    )
    check_lines(
        text,
        """
        arith.extui %a : tensor<16x16xi8> to tensor<16x16xi32>
        arith.andi
        arith.shli
        arith.cmpi ult
        arith.select
        tt.bitcast
        arith.shrui
        tt.join
        tt.reshape
        arith.extui %s : tensor<16x1xi8> to tensor<16x1xi32>
        arith.shli
        tt.bitcast
        arith.cmpi eq
        arith.select
        tt.expand_dims
        tt.broadcast
        tt.reshape
        arith.mulf
        arith.extf %b : tensor<32x16xbf16> to tensor<32x16xf32>
        tt.dot %50, %51, %c, inputPrecision = ieee
    """,
    )


def test_fp8_rhs_scale_is_transposed_and_fast_math_drops_the_nan_check():
    text = _decompose(
        "    %d = tt.dot_scaled %a, %b scale %s, %c lhs = fp16 rhs = e4m3 {fastMath = true} : tensor<16x64xf16> * "
        "tensor<64x16xf8E4M3FN>, tensor<16x2xi8> -> tensor<16x16xf32>",
        "%a: tensor<16x64xf16>, %b: tensor<64x16xf8E4M3FN>, %s: tensor<16x2xi8>, %c: tensor<16x16xf32>",
    )
    check_lines(
        text,
        """
        arith.extf %a : tensor<16x64xf16> to tensor<16x64xf32>
        tt.fp_to_fp %b : tensor<64x16xf8E4M3FN> -> tensor<64x16xf32>
        tt.trans %5 {order = array<i32: 1, 0>} : tensor<16x2xf32> -> tensor<2x16xf32>
        tt.expand_dims %6 {axis = 1 : i32} : tensor<2x16xf32> -> tensor<2x1x16xf32>
        tt.broadcast %7 : tensor<2x1x16xf32> -> tensor<2x32x16xf32>
        tt.reshape %8 : tensor<2x32x16xf32> -> tensor<64x16xf32>
        arith.mulf %1, %9 : tensor<64x16xf32>
        tt.dot %0, %10, %c, inputPrecision = ieee : tensor<16x64xf32> * tensor<64x16xf32> -> tensor<16x16xf32>
    """,
    )
    assert "arith.cmpi eq" not in text


def test_fp4_packed_along_m_is_interleaved_by_rows():
    text = _decompose(
        "    %d = tt.dot_scaled %a, %b, %c lhs = e2m1 rhs = e2m1 {fastMath = false, lhs_k_pack = false} : "
        "tensor<8x32xi8> * tensor<16x16xi8> -> tensor<16x16xf32>",
        "%a: tensor<8x32xi8>, %b: tensor<16x16xi8>, %c: tensor<16x16xf32>",
    )
    check_lines(
        text,
        """
        tt.join %17, %36 : tensor<8x32xf32> -> tensor<8x32x2xf32>
        tt.trans %37 {order = array<i32: 0, 2, 1>} : tensor<8x32x2xf32> -> tensor<8x2x32xf32>
        tt.reshape %38 : tensor<8x2x32xf32> -> tensor<16x32xf32>
        tt.join %57, %76 : tensor<16x16xf32> -> tensor<16x16x2xf32>
        tt.trans %77 {order = array<i32: 0, 2, 1>} : tensor<16x16x2xf32> -> tensor<16x2x16xf32>
        tt.reshape %78 : tensor<16x2x16xf32> -> tensor<32x16xf32>
        tt.dot %39, %79, %c, inputPrecision = ieee
    """,
    )


def test_non_f32_accumulator_is_widened_and_the_result_narrowed():
    text = _decompose(
        "    %d = tt.dot_scaled %a, %b, %c lhs = bf16 rhs = bf16 {fastMath = false} : tensor<16x32xbf16> * "
        "tensor<32x16xbf16> -> tensor<16x16xbf16>",
        "%a: tensor<16x32xbf16>, %b: tensor<32x16xbf16>, %c: tensor<16x16xbf16>",
    )
    check_lines(
        text,
        """
        arith.extf %c : tensor<16x16xbf16> to tensor<16x16xf32>
        tt.dot %0, %1, %2, inputPrecision = ieee : tensor<16x32xf32> * tensor<32x16xf32> -> tensor<16x16xf32>
        arith.truncf %3 : tensor<16x16xf32> to tensor<16x16xbf16>
    """,
    )


def test_unknown_format_is_a_named_error():
    with pytest.raises(UnsupportedError, match="format"):
        _decompose(
            "    %d = tt.dot_scaled %a, %b, %c lhs = e3m2 rhs = bf16 {fastMath = false} : tensor<16x32xi8> * "
            "tensor<32x16xbf16> -> tensor<16x16xf32>",
            "%a: tensor<16x32xi8>, %b: tensor<32x16xbf16>, %c: tensor<16x16xf32>",
        )


def test_a_backend_with_its_own_rule_keeps_the_op():
    rules = RuleTable("native")
    rules.register(O.DotScaled)(lambda ctx, op: None)
    desc = TargetDescriptor.__new__(TargetDescriptor)
    names = lambda r: [type(p) for p in legalization_passes(desc, Options(), r)]
    assert DecomposeDotScaled in names(None)
    assert DecomposeDotScaled in names(RuleTable("plain"))
    assert DecomposeDotScaled not in names(rules)
    assert DecomposeDotScaled not in names(rules.derive("vendor"))
