"""`tt.assert` that holds (compiled with debug=True: the checks must not change results) and `tt.print`'s
companion: a debug_barrier, which must be a no-op on results. Failing asserts and print output are tested in
tests/test_op_suite_debug.py, since they need the process's output or an exception."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import rand
from .tolerance import EXACT


@triton.jit
def checked_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    tl.device_assert(x != 0, "x must be nonzero")
    tl.device_assert(n > 0)
    tl.debug_barrier()
    tl.store(out_ptr + offs, x * 3, mask=mask)


def _build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    x = rand(shape, dtype, g)
    return Launch(
        [x, torch.empty_like(x), shape[0]], (triton.cdiv(shape[0], 64),), (1,), {"BLOCK": 64}, {"debug": True}
    )


register(
    Case(
        "assert_passes",
        "tt.assert",
        checked_kernel,
        ("int32", "float32"),
        ((1,), (500,)),
        _build,
        lambda launch, d: [launch.args[0] * 3],
        EXACT,
    )
)
