"""A long chain of single-use elementwise ops compiles and runs on every backend: fused generators are stored once
their cost passes `tile_model.MAX_FUSED_COST`, so neither the code generators' recursion (a bare RecursionError at
~300 ops on cpu_ref, ~150 on opencl before) nor OpenCL C's bracket nesting (PoCL: at most 256) can be exceeded."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch


def _chain_kernel(tmp_path, n: int):
    ops = []
    for i in range(n):
        ops.append(("    x = x * 1.0001 + 0.25", "    x = tl.sin(x)", "    x = tl.abs(x) - 0.5")[i % 3])
    src = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def deep_chain(X, Y, N, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(X + offs, mask=offs < N)\n" + "\n".join(ops) + "\n"
        "    tl.store(Y + offs, x, mask=offs < N)\n"
    )
    path = tmp_path / f"deep_chain_{n}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod.deep_chain


def _reference(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        if i % 3 == 0:
            x = x * 1.0001 + 0.25
        elif i % 3 == 1:
            x = torch.sin(x)
        else:
            x = torch.abs(x) - 0.5
    return x


@pytest.mark.parametrize("n", [450])
def test_long_single_use_chain(backend, tmp_path, n):
    kernel = _chain_kernel(tmp_path, n)
    x = torch.randn(1000, generator=torch.Generator().manual_seed(n))
    y = torch.empty_like(x)
    kernel[(4,)](x, y, 1000, BLOCK=256)
    torch.testing.assert_close(y, _reference(x, n), rtol=1e-4, atol=1e-5)
