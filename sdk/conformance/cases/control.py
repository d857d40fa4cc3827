"""Control flow: scf.for with tensor and scalar carries (negative steps, data-dependent bounds), scf.while,
scf.if with results, early `return` (cf branches), noinline helper calls, static_range unrolling."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import rand
from .tolerance import normwise


@triton.jit(noinline=True)
def _scale_of(pid, k):
    if pid % 2 == 0:
        return k * 2
    return k - 1


@triton.jit
def control_kernel(x_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n:
        return
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    steps = 0
    for start in range(0, cols, BLOCK):  # tensor and scalar carries
        m = start + r < cols
        x = tl.load(x_ptr + row * cols + start + r, mask=m, other=0.0).to(tl.float32)
        if (start // BLOCK) % 2 == 0:
            acc += x
        else:
            acc -= x * 0.5
        steps += 1
    for j in range(3, 0, -1):  # negative step
        acc = acc + j
    i = 0
    while i * i < row + 5:  # data-dependent while
        i += 1
    for k in tl.static_range(2):
        acc = acc + k
    scale = _scale_of(row, i + steps)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) * scale)


def _build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    rows, cols = shape
    x = rand((rows, cols), dtype, g, 0.5, 2)
    return Launch([x, torch.full((rows + 3,), -7.0), rows, cols], (rows + 3,), (1,), {"BLOCK": 32})


def _ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x = launch.args[0].double()
    rows, cols = x.shape
    out = launch.args[1].double().clone()
    for row in range(rows):
        w = torch.tensor([1.0 if (c // 32) % 2 == 0 else -0.5 for c in range(cols)], dtype=torch.float64)
        steps = (cols + 31) // 32
        i = 0
        while i * i < row + 5:
            i += 1
        total = (x[row] * w).sum() + 32 * (3 + 2 + 1) + 32 * (0 + 1)
        k = i + steps
        out[row] = total * (k * 2 if row % 2 == 0 else k - 1)
    return [out.float()]


register(
    Case(
        "control_flow",
        "scf.for",
        control_kernel,
        ("float16", "float32", "float64"),
        ((1, 1), (5, 100), (9, 64)),
        _build,
        _ref,
        normwise(64),
    )
)
