"""Golden SDK IR of the shared `inline-tensor-calls` pass (sdk/transforms/inline_calls.py): calls moving tensors
become the callee's body (its early returns as `scf.if`), scalar calls stay calls, inlined functions go, and what
cannot be inlined is refused by name."""

from __future__ import annotations

import pytest
from golden_ir import check_lines
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.pipeline import PassContext
from triton_backend_sdk.transforms import inline_calls
from triton_backend_sdk.transforms.inline_calls import InlineTensorCalls

KERNEL = """
  tt.func public @k(%p: !tt.ptr<f32>, %n: i32) {{
{body}
    tt.return
  }}"""


def _inline(helpers: str, body: str) -> str:
    module = parse_ttir("module {\n" + helpers + KERNEL.format(body=body) + "\n}")
    InlineTensorCalls().run(module, PassContext(Options(), None, {}))  # type: ignore[arg-type]
    verify(module)
    return print_module(module)


LOAD = """
  tt.func private @load(%ptr: !tt.ptr<f32>, %n: i32) -> tensor<8xf32> attributes {noinline = true} {
    %offs = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %ps = tt.splat %ptr : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %a = tt.addptr %ps, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %a, %m : tensor<8x!tt.ptr<f32>>
    tt.return %v : tensor<8xf32>
  }
  tt.func private @twice(%x: f32) -> f32 attributes {noinline = true} {
    %y = arith.addf %x, %x : f32
    tt.return %y : f32
  }"""

USE = """    %offs = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %a = tt.addptr %ps, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %a, %r : tensor<8x!tt.ptr<f32>>"""


def test_tensor_result_inlined_scalar_call_kept():
    text = _inline(
        LOAD,
        "    %x = tt.call @load(%p, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>\n"
        "    %one = arith.constant 1.0 : f32\n"
        "    %s = tt.call @twice(%one) : (f32) -> f32\n"
        "    %ss = tt.splat %s : f32 -> tensor<8xf32>\n"
        "    %r = arith.addf %x, %ss : tensor<8xf32>\n" + USE,
    )
    check_lines(
        text,
        """
        tt.func public @k(%p: !tt.ptr<f32>, %n: i32)
        tt.make_range
        tt.splat %n : i32 -> tensor<8xi32>
        arith.cmpi slt
        tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
        %x = tt.load
        tt.call @twice(%one) : (f32) -> f32
        arith.addf %x,
        tt.store
        """,
    )
    assert "tt.func private @twice" in text and "@load" not in text and "tt.return %v" not in text


def test_called_twice_nested_and_removed():
    helpers = (
        LOAD
        + """
  tt.func private @sum2(%ptr: !tt.ptr<f32>, %n: i32) -> tensor<8xf32> attributes {noinline = true} {
    %a = tt.call @load(%ptr, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>
    %b = tt.call @load(%ptr, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>
    %s = arith.addf %a, %b : tensor<8xf32>
    tt.return %s : tensor<8xf32>
  }"""
    )
    text = _inline(
        helpers,
        "    %x = tt.call @sum2(%p, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>\n"
        "    %y = tt.call @load(%p, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>\n"
        "    %r = arith.addf %x, %y : tensor<8xf32>\n" + USE,
    )
    assert text.count("tt.load") == 3 and "tt.call" not in text
    assert [line.split("@")[1].split("(")[0] for line in text.splitlines() if "tt.func" in line] == ["twice", "k"]
    check_lines(text, "%x = arith.addf\n%y = tt.load\n%r = arith.addf %x, %y")


EARLY = """
  tt.func private @early(%v: tensor<8xf32>, %c: i32) -> tensor<8xf32> attributes {noinline = true} {
    %z = arith.constant 0 : i32
    %pos = arith.cmpi sgt, %c, %z : i32
    cf.cond_br %pos, ^bb1, ^bb2(%v : tensor<8xf32>)
  ^bb1:
    %d = arith.addf %v, %v : tensor<8xf32>
    %big = arith.cmpi sgt, %c, %z : i32
    cf.cond_br %big, ^bb3, ^bb2(%d : tensor<8xf32>)
  ^bb3:
    tt.return %d : tensor<8xf32>
  ^bb2(%j: tensor<8xf32>):
    %m = arith.mulf %j, %j : tensor<8xf32>
    tt.return %m : tensor<8xf32>
  }"""


def test_early_returns_become_ifs_inside_a_loop():
    """Branches of several blocks become nested `scf.if`s, inside an `scf.for`; the join block ^bb2 is copied once
    per path reaching it."""
    text = _inline(
        LOAD + EARLY,
        "    %x = tt.call @load(%p, %n) : (!tt.ptr<f32>, i32) -> tensor<8xf32>\n"
        "    %lo = arith.constant 0 : i32\n    %st = arith.constant 1 : i32\n"
        "    %r = scf.for %i = %lo to %n step %st iter_args(%acc = %x) -> (tensor<8xf32>) : i32 {\n"
        "      %e = tt.call @early(%acc, %i) : (tensor<8xf32>, i32) -> tensor<8xf32>\n"
        "      scf.yield %e : tensor<8xf32>\n    }\n" + USE,
    )
    check_lines(
        text,
        """
        scf.for %i = %lo to %n step %st iter_args(%acc = %x)
        %pos = arith.cmpi sgt, %i,
        %e = scf.if %pos -> (tensor<8xf32>) {
        %d = arith.addf %acc, %acc
        %big = arith.cmpi sgt, %i,
        %0 = scf.if %big -> (tensor<8xf32>) {
        scf.yield %d
        } else {
        %m_0 = arith.mulf %d, %d
        scf.yield %m_0
        scf.yield %0
        } else {
        %m_0 = arith.mulf %acc, %acc
        scf.yield %m_0
        scf.yield %e : tensor<8xf32>
        """,
    )
    assert "cf.br" not in text and "cf.cond_br" not in text and "@early" not in text


def test_recursion_refused():
    helpers = """
  tt.func private @rec(%p: !tt.ptr<f32>) -> tensor<8xf32> attributes {noinline = true} {
    %v = tt.call @rec(%p) : (!tt.ptr<f32>) -> tensor<8xf32>
    tt.return %v : tensor<8xf32>
  }"""
    with pytest.raises(UnsupportedError, match=r"recursive call of a function with tensors \(@k -> @rec -> @rec\)"):
        _inline(helpers, "    %r = tt.call @rec(%p) : (!tt.ptr<f32>) -> tensor<8xf32>\n" + USE)


def test_too_many_paths_refused(monkeypatch):
    monkeypatch.setattr(inline_calls, "MAX_BLOCK_COPIES", 3)
    with pytest.raises(UnsupportedError, match="@early: its branches join along more than 3 paths"):
        _inline(
            EARLY,
            "    %v = arith.constant dense<1.0> : tensor<8xf32>\n"
            "    %r = tt.call @early(%v, %n) : (tensor<8xf32>, i32) -> tensor<8xf32>\n" + USE,
        )


def test_scalar_only_module_unchanged():
    src = "module {\n" + LOAD.split("  tt.func private @twice")[0] + KERNEL.format(body="") + "\n}"
    module = parse_ttir(src.replace("@load", "@unused"))
    before = print_module(module)
    InlineTensorCalls().run(module, PassContext(Options(), None, {}))  # type: ignore[arg-type]
    assert print_module(module) == before
    assert any(isinstance(op, O.Func) and op.sym_name == "unused" for op in module.ops)
