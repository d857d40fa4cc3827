"""Dialect plugins: `dialect_op` gives an op of a dialect the SDK does not know its SDK IR form (custom syntax, result
types from its signatures) and per-backend lowerings; `Plugin(mlir_libraries=...)` loads an upstream Triton extension
library (the wheel's MLIR dialect plugin). The worked example (examples/dialect_plugin.py) runs in its own processes:
a library loaded into Triton's global symbol scope stays for the process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import triton
from triton_backend_sdk.custom_ops import dialect_op
from triton_backend_sdk.ir import parse_ttir, print_module
from triton_backend_sdk.plugins import Plugin, PluginError, activate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "dialect_plugin.py")
UPSTREAM_LIBRARY = os.path.join(os.path.dirname(triton.__file__), "plugins", "libMLIRDialectPlugin.so")

twice = dialect_op(
    "tsdkdialect.twice",
    ("lhs", "rhs"),
    ("sum", "wide"),
    {("int32", "int32"): ("int32", "int64"), ("fp32", "fp32"): ("fp32", "fp64")},
    assembly_format="$lhs, $rhs attr-dict : type($lhs)",
)

TEXT = """module {
  tt.func public @k(%a: tensor<8xi32>, %b: tensor<8xi32>, %c: f32) {
    %s, %w = tsdkdialect.twice %a, %b : tensor<8xi32>
    %t, %u = tsdkdialect.twice %c, %c : f32
    tt.return
  }
}"""


def test_dialect_op_is_read_in_its_syntax_with_result_types_from_its_signatures():
    module = parse_ttir(TEXT)
    ops = [op for op in module.walk() if isinstance(op, twice.op)]
    assert len(ops) == 2
    assert [str(r.type) for r in ops[0].results] == ["tensor<8xi32>", "tensor<8xi64>"]
    assert [str(r.type) for r in ops[1].results] == ["f32", "f64"]
    printed = print_module(module)
    assert "tsdkdialect.twice %a, %b : tensor<8xi32>" in printed and "tsdkdialect.twice %c, %c : f32" in printed
    assert print_module(parse_ttir(printed)) == printed


def test_dialect_op_without_a_matching_signature_is_named():
    with pytest.raises(Exception, match=r"tsdkdialect\.twice.*no signature for operands \('i16', 'i16'\)"):
        parse_ttir(TEXT.replace("tensor<8xi32>", "tensor<8xi16>"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("arith.addi", ("a", "b"), ("r",), {("int32", "int32"): "int32"}), "collides with the built-in op class"),
        (("nodot", ("a",), ("r",), {("int32",): "int32"}), "must be dotted"),
        (("tsdkdialect.bad", ("a",), ("r",), {("int32", "int32"): "int32"}), "does not match operands"),
    ],
)
def test_dialect_op_declaration_errors(args, message):
    with pytest.raises(ValueError, match=message):
        dialect_op(*args)


def test_dialect_op_is_not_a_kernel_function():
    with pytest.raises(TypeError, match="not called from Python kernels"):
        twice.kernel_fn(1, 2)


def test_a_missing_mlir_library_is_refused_before_anything_runs():
    ran = []
    plugin = Plugin(
        "tsdk_missing_mlir", "1.0", mlir_libraries=("/nonexistent/libNope.so",), setup=lambda: ran.append(1)
    )
    with pytest.raises(PluginError, match=r"tsdk_missing_mlir.*MLIR extension library '/nonexistent/libNope.so'"):
        activate(plugin)
    assert not ran


def _example(backend: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, EXAMPLE, "--backend", backend],
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ, **env),
        check=False,
    )


@pytest.mark.skipif(not os.path.isfile(UPSTREAM_LIBRARY), reason="this Triton wheel ships no libMLIRDialectPlugin.so")
def test_example_runs_on_cpu_ref_with_the_upstream_dialect(tmp_path):
    r = _example("cpu_ref", TRITON_CACHE_DIR=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert "cpu_ref: acme.divmod (two results) and the absmax reduction match torch" in r.stdout
    assert "cpu_ref: plugin.magic (read from TTIR through the library's dialect) and create_custom_op match" in r.stdout


def _opencl_device() -> bool:
    try:
        from triton_backend_sdk.backends.opencl import runtime

        return bool(runtime.all_devices())
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(not _opencl_device(), reason="no OpenCL device here")
@pytest.mark.parametrize("work_items", ["", "128"])
def test_example_runs_on_opencl_and_names_why_the_upstream_library_cannot(tmp_path, work_items):
    r = _example("opencl", TRITON_CACHE_DIR=str(tmp_path), TRITON_OPENCL_WORK_ITEMS=work_items)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    assert "opencl: acme.divmod (two results) and the absmax reduction match torch" in r.stdout
    assert "opencl: plugin.magic" in r.stdout or "Triton C++ plugin libraries" in r.stdout, r.stdout
