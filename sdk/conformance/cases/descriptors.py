"""Tensor descriptors: in-kernel `tl.make_tensor_descriptor` loads/stores and host-side `TensorDescriptor` kernel
arguments, on ragged shapes (out-of-bounds tiles read zeros and drop stores), 2-D grids."""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from . import Case, Launch, register
from .inputs import rand
from .tolerance import EXACT

BM, BN = 16, 32


@triton.jit
def device_desc_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, [N, M], [M, 1], [BN, BM])
    m0, n0 = tl.program_id(0) * BM, tl.program_id(1) * BN
    t = src.load([m0, n0])
    dst.store([n0, m0], tl.trans(t) + 1)


@triton.jit
def host_desc_kernel(x_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m0, n0 = tl.program_id(0) * BM, tl.program_id(1) * BN
    t = x_desc.load([m0, n0])
    out_desc.store([n0, m0], tl.trans(t) + 1)


def _build(host: bool):
    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        m, n = shape
        x = rand((m, n), dtype, g, 1, 50)
        out = torch.zeros((n, m), dtype=x.dtype)
        grid = (triton.cdiv(m, BM), triton.cdiv(n, BN))
        if host:
            args = [TensorDescriptor.from_tensor(x, [BM, BN]), TensorDescriptor.from_tensor(out, [BN, BM])]
            return Launch(args, grid, (1,), {"BM": BM, "BN": BN})
        return Launch([x, out, m, n], grid, (1,), {"BM": BM, "BN": BN})

    return build


def _ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x = launch.args[0]
    x = getattr(x, "base", x)
    return [x.t() + 1]


register(
    Case(
        "descriptor_device",
        "tt.make_tensor_descriptor",
        device_desc_kernel,
        ("int16", "int32", "float16", "float32", "float64"),
        ((16, 32), (40, 72), (8, 8)),
        _build(False),
        _ref,
        EXACT,
        note="strides must be 16-byte multiples (Triton checks)",
    )
)
register(
    Case(
        "descriptor_host",
        "tt.descriptor_load",
        host_desc_kernel,
        ("int16", "int32", "float16", "float32"),
        ((16, 32), (40, 72), (8, 8)),
        _build(True),
        _ref,
        EXACT,
        min_triton=(3, 7),
        note="host TensorDescriptor arguments, expanded by the launcher as Triton's TTIR pass expands them",
    )
)
