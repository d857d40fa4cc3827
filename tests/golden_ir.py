"""Helpers for golden IR tests: lower a small TTIR function body with cpu_ref's rules, and a tiny FileCheck that
the opencl golden tests (rendered OpenCL C) use too."""

from __future__ import annotations

from triton_backend_sdk.backends.cpu_ref.codegen import RULES, lower_module
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir import Module, parse_ttir
from triton_backend_sdk.options import Options

# Golden IR is the same on every host: lowering reads the descriptor (exp's scaling, for one, differs with
# AVX-512F), so the goldens pin an AVX-512 machine rather than take this host's.
GOLDEN_TARGET = TargetDescriptor(
    name="cpu_ref",
    arch="skylake-avx512",
    max_threads_per_program=1 << 16,
    vector_width_bits=512,
    num_compute_units=2,
    features=("+avx", "+avx2", "+avx512bw", "+avx512dq", "+avx512f", "+avx512vl", "+fma", "+sse2", "+sse4.2"),
)


def legalized(module: Module) -> Module:
    """`module` after the shared integer-semantics legalization every backend's `sdkir` stage runs."""
    from triton_backend_sdk.transforms.int_semantics import IntSemantics

    IntSemantics().run(module, None)
    return module


def lower(body: str, args: str = "%x: !tt.ptr<f32>, %n: i32", extra: str = "", legalize: bool = False) -> str:
    """Unoptimised LLVM IR of `tt.func @k(args) { body; tt.return }` (plus `extra` top-level ops, e.g. helpers);
    `legalize` runs the shared integer-semantics pass first, as the `sdkir` stage does."""
    text = f"""module {{
  tt.func public @k({args}) {{
{body}
    tt.return
  }}
{extra}
}}"""
    module = parse_ttir(text)
    if legalize:
        legalized(module)
    return str(lower_module(module, "k", RULES, Options(enable_fp_fusion=False), GOLDEN_TARGET))


def check_lines(text: str, expected: str) -> None:
    """Each expected line must appear, in order, as a substring of some later output line (whitespace collapsed)."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    pos = 0
    for want in (" ".join(w.split()) for w in expected.strip().splitlines()):
        while pos < len(lines) and want not in lines[pos]:
            pos += 1
        assert pos < len(lines), f"expected line not found in order: {want!r}\n--- output ---\n{text}"
        pos += 1
