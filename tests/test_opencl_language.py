"""The seam between the shared C-like rules and the C dialect (`render/language.py`).

The rules spell C; every OpenCL-only construct comes from the language object. Two checks: no rule file's C text
(its string literals, docstrings aside) names an OpenCL-only identifier, and a dialect that renames spellings gets
its spellings in the generated source, with the rule table unchanged. No OpenCL device is needed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from triton_backend_sdk.backends.opencl import render as R
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, OpenCLLanguage, render_module
from triton_backend_sdk.backends.opencl.render.language import CStyleLanguage, LanguageError
from triton_backend_sdk.ir import parse_ttir

RENDER_DIR = Path(R.__file__).parent
FEATURES = frozenset({"cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"})

#: OpenCL C's own identifiers (built-ins, qualifiers, attributes, vector syntax) that C lacks
OPENCL_ONLY = re.compile(
    r"\b(as|convert)_([a-z]|$)|\b(atomic|atom)_((add|sub|xchg|inc|dec|cmpxchg|min|max|and|or|xor)\b|$)"
    r"|\bvload|\bvstore|\bget_(global|local|group)_id"
    r"|\bget_num_groups|\bbarrier\(|\bmem_fence|\bCLK_|__global|__local|__constant|__kernel|__attribute__"
    r"|\bmul_hi\(|\bclz\(|\bpopcount\(|\brsqrt\(|\bexp10\(|\bmad\(|\bnative_|\b(min|max|abs)\("
    r"|\((u?char|u?short|u?int|u?long|half|float|double)(2|3|4|8|16)\)|\.s[0-9a-f]\b|#pragma OPENCL"
)


def _c_text(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of every string literal piece in a module but its docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


RULE_FILES = sorted(p for p in RENDER_DIR.glob("*.py") if p.name != "language.py")


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_rule_files_spell_no_opencl(path: Path):
    hits = [
        f"{path.name}:{line}: {m.group(0)!r} in {text!r}"
        for line, text in _c_text(ast.parse(path.read_text()))
        for m in OPENCL_ONLY.finditer(text)
    ]
    assert not hits, "OpenCL spellings outside language.py:\n" + "\n".join(hits)


def test_the_guard_sees_opencl_spellings():
    """The guard's own check: the spellings it looks for are the ones OpenCLLanguage produces."""
    spelled = [
        OPENCL.bitcast("uint", "x"),
        OPENCL.convert("float", "x", "rtz"),
        OPENCL.atomic("cmpxchg", 32, "p", "0", "1"),
        OPENCL.atomic("add", 64, "p", "1"),
        OPENCL.vector_load(4, "p"),
        OPENCL.vector_store(4, "v", "p"),
        OPENCL.vector_literal("float", ["a", "b", "c", "d"]),
        OPENCL.vector_elem("v", 3),
        OPENCL.vector_splat("float", 4, "x"),
        OPENCL.call("popcount", "x"),
        OPENCL.call("mul_hi", "a", "b"),
        OPENCL.call("max", "a", "b"),
        OPENCL.barrier,
        OPENCL.global_qual,
        OPENCL.aligned,
    ]
    assert all(OPENCL_ONLY.search(s) for s in spelled), [s for s in spelled if not OPENCL_ONLY.search(s)]
    assert not OPENCL_ONLY.search(OPENCL.call("fmax", "a", "b") + OPENCL.convert("float", "x") + "(float)x")


@dataclass(frozen=True)
class Renamed(OpenCLLanguage):
    """OpenCL with a few spellings renamed, as a vendor's dialect would."""

    prelude: str = '#include "v_dialect.h"'

    builtins: dict[str, str] = field(
        default_factory=lambda: {**OPENCL.builtins, "popcount": "v_popc", "max": "v_max", "fmax": "v_fmax"}, hash=False
    )

    def bitcast(self, to: str, x: str) -> str:
        return f"v_bits_{to}({x})"

    def convert(self, to: str, x: str, rounding: str | None = None) -> str:
        return super().convert(to, x) if rounding is None else f"v_cvt_{rounding}_{to}({x})"

    def printf(self, fmt: str, *args: str) -> str:
        return f'v_print("{fmt}", {", ".join(args)})'

    def atomic(self, op: str, bits: int, ptr: str, *args: str) -> str:
        return f"v_atomic_{op}{bits}({', '.join((ptr, *args))})"

    def vector_load(self, n: int, ptr: str) -> str:
        return f"v_load{n}({ptr})"

    def vector_store(self, n: int, value: str, ptr: str) -> str:
        return f"v_store{n}({ptr}, {value});"


BODY = """
    %f = tt.load %x : !tt.ptr<f32>
    %i = arith.bitcast %f : f32 to i32
    %c = math.ctpop %i : i32
    %u = arith.maxui %i, %c : i32
    %m = arith.maxnumf %f, %f : f32
    %d = arith.extf %m : f32 to f64
    %h = tt.fp_to_fp %d, rounding = rtz : f64 -> f16
    %e = arith.extf %h : f16 to f32
    tt.print " c: " {hex = false, isSigned = array<i32: 1>} : %c : i32
    %t = arith.cmpi slt, %c, %u : i32
    tt.assert %t, "c < u" : i1
    tt.store %y, %u : !tt.ptr<i32>
    tt.store %x, %e : !tt.ptr<f32>
    %o = tt.atomic_rmw add, acq_rel, gpu, %y, %c : (!tt.ptr<i32>, i32) -> i32
    %b = tt.atomic_rmw umax, relaxed, gpu, %z, %k : (!tt.ptr<i8>, i8) -> i8
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %q = tt.addptr %p, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %v = tt.load %q : tensor<1024x!tt.ptr<f32>>
    %w = arith.addf %v, %v : tensor<1024xf32>
    tt.store %q, %w : tensor<1024x!tt.ptr<f32>>
"""


def render(lang: CStyleLanguage) -> str:
    text = f"""module {{
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<i32>, %z: !tt.ptr<i8>, %k: i8) {{
{BODY}
    tt.return
  }}
}}"""
    return render_module(parse_ttir(text), "k", OPENCL_RULES, lang, 128, FEATURES, "test-device").source


def test_a_renamed_dialect_spells_its_own_builtins():
    """The same rule table renders a dialect's spellings: only the language object changed."""
    cl, v = render(OPENCL), render(Renamed())
    assert v.splitlines()[1] == '#include "v_dialect.h"' and "v_dialect" not in cl
    v = v.replace('#include "v_dialect.h"\n', "")
    pairs = {
        "as_uint(v_f0)": "v_bits_uint(v_f0)",
        "popcount(v_i0)": "v_popc(v_i0)",
        "(int)max((uint)v_i0, (uint)v_c0)": "(int)v_max((uint)v_i0, (uint)v_c0)",
        "= fmax(v_f0, v_f0)": "= v_fmax(v_f0, v_f0)",
        "convert_float_rtz(v_d0)": "v_cvt_rtz_float(v_d0)",
        'printf("pid (%d, %d, %d) idx () c: %d\\n", tb_pid0': 'v_print("pid (%d, %d, %d) idx () c: %d\\n", tb_pid0',
        "atomic_cmpxchg(tb_err, 0, 1)": "v_atomic_cmpxchg32(tb_err, 0, 1)",
        "atomic_add((volatile __global int *)(a_y0), ": "v_atomic_add32((volatile __global int *)(a_y0), ",
        "old = atomic_cmpxchg(w, prev, ": "old = v_atomic_cmpxchg32(w, prev, ",
        "vload4(0, p0)": "v_load4(p0)",
    }
    for opencl, renamed in pairs.items():
        assert opencl in cl and renamed not in cl, opencl
        assert renamed in v and opencl not in v, renamed
    # beyond the renamed spellings (in the rules' code and in the helpers'), the two sources are the same text
    undo = {
        r"\bv_bits_(\w+)\(": r"as_\1(",
        r"\bv_cvt_rtz_(\w+)\(": r"convert_\1_rtz(",
        r"\bv_atomic_(\w+)32\(": r"atomic_\1(",
        r"\bv_atomic_(\w+)64\(": r"atom_\1(",
        r"\bv_popc\(": "popcount(",
        r"\bv_max\(": "max(",
        r"\bv_fmax\(": "fmax(",
        r"\bv_print\(": "printf(",
        r"\bv_load4\((\w+)\)": r"vload4(0, \1)",
        r"\bv_store4\((\w+), ([^;]*)\);": r"vstore4(\2, 0, \1);",
    }
    for pattern, opencl in undo.items():
        v = re.sub(pattern, opencl, v)
    assert v == cl


def test_plain_c_names_what_it_cannot_spell():
    """The C base has no OpenCL built-ins: a rule needing one fails with the construct named."""
    with pytest.raises(LanguageError, match="CStyleLanguage has no spelling for reinterpreting bits as uint"):
        render(CStyleLanguage())
    assert CStyleLanguage().call("fmax", "a", "b") == "fmax(a, b)"  # C99's type-generic math is shared
    with pytest.raises(LanguageError, match="'popcount'"):
        CStyleLanguage().call("popcount", "x")
