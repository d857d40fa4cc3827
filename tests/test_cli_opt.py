"""`triton-sdk opt`: the SDK's and plugins' IR passes run by name from the command line, with typed options."""

from __future__ import annotations

import dataclasses

import pytest
from triton_backend_sdk import pass_registry
from triton_backend_sdk.cli import main
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import parse_ttir
from triton_backend_sdk.pipeline import ir_pass

DIV = """module {
  tt.func public @k(%a: i32, %b: i32, %p: !tt.ptr<i32>) {
    %q = arith.divsi %a, %b : i32
    tt.store %p, %q : !tt.ptr<i32>
    tt.return
  }
}
"""


@ir_pass(name="tsdk-test-scale-constants")
class ScaleConstants:
    """Multiplies every i32 scalar constant by `factor` (a plugin's pass, for the runner)."""

    factor: int = 2
    negate: bool = False

    def run(self, module, ctx) -> None:  # type: ignore[no-untyped-def]
        from triton_backend_sdk.ir.attrs import IntegerAttr

        for op in module.walk():
            if isinstance(op, O.Constant) and isinstance(op.value, IntegerAttr):
                v = op.value.value * self.factor * (-1 if self.negate else 1)
                op.attrs["value"] = dataclasses.replace(op.value, value=v)


@pytest.fixture
def div_file(tmp_path):
    path = tmp_path / "div.sdkir"
    path.write_text(DIV)
    return str(path)


def test_list_names_sdk_and_plugin_passes_with_their_options(capsys):
    assert main(["opt", "--list"]) == 0
    out = capsys.readouterr().out
    assert "int-semantics" in out and "math-library" in out and "thread-locality" in out
    assert "tsdk-test-scale-constants" in out and "options: factor=2, negate=False" in out


def test_an_sdk_legalization_runs_by_name(div_file, capsys):
    assert main(["opt", div_file, "-p", "int-semantics"]) == 0
    out = capsys.readouterr().out
    m = parse_ttir(out)
    assert any(isinstance(op, O.Select) for op in m.walk()), out  # the guarded division: b == 0 and INT_MIN / -1
    assert any(isinstance(op, O.DivSI) for op in m.walk())


def test_a_plugin_pass_runs_with_typed_options_in_order(tmp_path, capsys):
    path = tmp_path / "c.sdkir"
    path.write_text(DIV.replace("%q = arith.divsi %a, %b : i32", "%q = arith.constant 5 : i32"))
    out_file = tmp_path / "out.sdkir"
    args = ["opt", str(path), "-p", "tsdk-test-scale-constants:factor=3", "-p", "tsdk-test-scale-constants:negate=true"]
    assert main([*args, "-o", str(out_file)]) == 0
    assert "arith.constant -30 : i32" in out_file.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "int-semantic"], "no SDK IR pass named 'int-semantic'; did you mean int-semantics"),
        (["-p", "tsdk-test-scale-constants:size=3"], "has no option size (its options: factor: int, negate: bool)"),
        (["-p", "tsdk-test-scale-constants:factor=x"], "option factor='x' is not a int"),
        (["-p", "tsdk-test-scale-constants:factor"], "is not OPT=VALUE"),
        ([], "give at least one pass"),
    ],
)
def test_mistakes_are_one_line_errors(div_file, capsys, args, message):
    assert main(["opt", div_file, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_an_ambiguous_name_names_both_classes():
    @ir_pass(name="tsdk-test-twice-named")
    class One:
        def run(self, module, ctx) -> None:  # type: ignore[no-untyped-def]
            pass

    @ir_pass(name="tsdk-test-twice-named")
    class Two:
        def run(self, module, ctx) -> None:  # type: ignore[no-untyped-def]
            pass

    with pytest.raises(ValueError, match=r"claimed by several classes: .*One, .*Two"):
        pass_registry.lookup("tsdk-test-twice-named")


def test_a_pass_that_breaks_the_ir_is_named(div_file, capsys):
    @ir_pass(name="tsdk-test-breaker")
    class Breaker:
        def run(self, module, ctx) -> None:  # type: ignore[no-untyped-def]
            for op in module.walk():
                if isinstance(op, O.Store):
                    op.set_operand(1, op.operands[0])  # stores a pointer where an i32 goes

    assert main(["opt", div_file, "-p", "tsdk-test-breaker"]) == 1
    assert "pass 'tsdk-test-breaker' produced invalid IR" in capsys.readouterr().err
