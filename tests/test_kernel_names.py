"""Kernels may be named anything Python allows, including keywords and built-ins of the device language
(`__kernel void kernel(...)` does not build in OpenCL C): every backend runs them under the user's name."""

from __future__ import annotations

import importlib.util

import pytest
import torch
import triton

NAMES = [
    "kernel",
    "double",
    "float",
    "main",
    "sin",
    "max",
    "local",
    "constant",
    "private",
    "half",
    "int",
    "restrict",
    "tb_pid0",
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, triton.JITFunction]:
    """One module of kernels named after `NAMES` (Triton reads a kernel's source from its file)."""
    body = ["import triton", "import triton.language as tl", ""]
    for name in NAMES:
        body += [
            "@triton.jit",
            f"def {name}(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
            "    m = offs < n",
            "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3 - 1, mask=m)",
            "",
        ]
    path = tmp_path_factory.mktemp("names") / "named_kernels.py"
    path.write_text("\n".join(body))
    spec = importlib.util.spec_from_file_location("named_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {name: getattr(mod, name) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_kernel_named_like_a_device_keyword_runs(backend, kernels, name):
    k = kernels[name]
    x = torch.randn(1003, generator=torch.Generator().manual_seed(len(name)))
    out = torch.full_like(x, float("nan"))
    compiled = k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    torch.testing.assert_close(out, x * 3 - 1)
    assert compiled.metadata.name == name
