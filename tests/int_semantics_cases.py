"""Edge cases of Triton's integer semantics: the kernels and their inputs, shared by the differential tests
(tests/test_int_semantics_backends.py) and the script that records what Triton's CUDA path computes for them
(tools/gpu/make_int_semantics_goldens.py, whose output is tests/data/int_semantics_cuda.json).

Every input is loaded at run time, so no compiler folds an edge case away: x/0, INT_MIN/-1, x%0, shifts by the
width and beyond (and by negative amounts), and float→int of NaN, ±inf and out-of-range values for every width.
"""

from __future__ import annotations

import itertools

import torch
import triton
import triton.language as tl

BLOCK = 128
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
TORCH = {d: getattr(torch, d) for d in INTS + FLOATS}
TL = {d: getattr(tl, d) for d in INTS + FLOATS}
_SIGNED_OF = {"uint8": torch.int8, "uint16": torch.int16, "uint32": torch.int32, "uint64": torch.int64}


def width(dtype: str) -> int:
    return TORCH[dtype].itemsize * 8


def _bounds(dtype: str) -> tuple[int, int]:
    w = width(dtype)
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dtype in SIGNED else (0, (1 << w) - 1)


def int_tensor(values: list[int], dtype: str) -> torch.Tensor:
    """A tensor of `dtype` holding `values` (each taken modulo 2**width), for every signedness torch has."""
    w = width(dtype)
    signed = [((v + (1 << (w - 1))) % (1 << w)) - (1 << (w - 1)) for v in values]
    t = torch.tensor(signed, dtype=_SIGNED_OF.get(dtype, TORCH[dtype]))
    return t.view(TORCH[dtype])


def int_values(t: torch.Tensor, dtype: str) -> list[int]:
    """The integers a tensor of `dtype` holds, read with `dtype`'s signedness."""
    raw = t.cpu().view(_SIGNED_OF.get(dtype, TORCH[dtype])).tolist()
    w = width(dtype)
    return raw if dtype in SIGNED else [v % (1 << w) for v in raw]


def div_operands(dtype: str) -> tuple[list[int], list[int]]:
    """Every pair of (dividend, divisor) from two lists holding 0, ±1, the extremes and ordinary values."""
    lo, hi = _bounds(dtype)
    if dtype in SIGNED:
        xs = [lo, lo + 1, -7, -1, 0, 1, 7, hi]
        ys = [0, -1, 1, 2, -2, 3, -7, lo, hi]
    else:
        xs = [0, 1, 7, hi // 2, hi // 2 + 1, hi - 1, hi]
        ys = [0, 1, 2, 3, 7, hi // 2 + 1, hi]
    pairs = list(itertools.product(xs, ys))
    return [a for a, _ in pairs], [b for _, b in pairs]


def shift_operands(dtype: str) -> tuple[list[int], list[int]]:
    """Every pair of (value, amount) with amounts below, at and above the width (and negative ones: huge unsigned)."""
    lo, hi = _bounds(dtype)
    w = width(dtype)
    xs = [1, 5, lo, hi, -1 if dtype in SIGNED else hi - 1, 0x5A5A5A5A5A5A5A5A % (1 << w)]
    amounts = [0, 1, w - 1, w, w + 1, 2 * w - 1, 2 * w, min(100, hi), hi]
    if dtype in SIGNED:
        amounts += [-1, lo]
    pairs = list(itertools.product(xs, amounts))
    return [a for a, _ in pairs], [b for _, b in pairs]


def float_inputs(dtype: str) -> torch.Tensor:
    """NaN, ±inf, ±0, fractions, and values just inside and beyond the range of every integer width."""
    nan, inf = float("nan"), float("inf")
    vals = [nan, -nan, inf, -inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 3.7, -3.7]
    vals += [127.0, 127.9, 128.0, -128.0, -128.9, -129.0, 255.0, 255.9, 256.0, 300.5, -300.5]
    vals += [32767.0, 32768.0, -32768.0, -32769.0, 65535.0, 65536.0, 1e5, -1e5]
    vals += [2.0**31 - 128, 2.0**31, -(2.0**31), -(2.0**31) - 256, 2.0**32, 2.0**32 + 512, 1e10, -1e10]
    vals += [2.0**63, -(2.0**63), 2.0**64, 1e19, 1e20, -1e20, 3.0e38, -3.0e38, 1e300, -1e300]
    return torch.tensor(vals, dtype=torch.float64).to(TORCH[dtype])


@triton.jit
def int_binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "div":
        z = x // y
    elif OP == "rem":
        z = x % y
    elif OP == "shl":
        z = x << y
    else:
        tl.static_assert(OP == "shr")
        z = x >> y
    tl.store(out_ptr + offs, z, mask=mask)


@triton.jit
def float_to_int_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)


def binary_case(op: str, dtype: str) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ys = (div_operands if op in ("div", "rem") else shift_operands)(dtype)
    return int_tensor(xs, dtype), int_tensor(ys, dtype)


def run_binary(op: str, dtype: str, device: str) -> list[int]:
    """Run `x op y` over the case's operands on `device` (the active Triton backend); the results as integers."""
    x, y = binary_case(op, dtype)
    x, y = x.to(device), y.to(device)
    out = torch.empty_like(x)
    n = x.numel()
    int_binary_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, OP=op, BLOCK=BLOCK)
    return int_values(out, dtype)


def run_float_to_int(src: str, dst: str, device: str) -> list[int]:
    x = float_inputs(src).to(device)
    out = torch.empty(x.shape, dtype=TORCH[dst], device=device)
    n = x.numel()
    float_to_int_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    return int_values(out, dst)


def all_keys() -> list[tuple[str, str, str]]:
    """(kind, first dtype, second dtype-or-op) for every recorded case."""
    keys = [("binary", d, op) for op in ("div", "rem", "shl", "shr") for d in INTS]
    keys += [("float_to_int", s, d) for s in FLOATS for d in INTS]
    return keys


def run_key(key: tuple[str, str, str], device: str) -> list[int]:
    kind, a, b = key
    return run_binary(b, a, device) if kind == "binary" else run_float_to_int(a, b, device)


def key_name(key: tuple[str, str, str]) -> str:
    return "|".join(key)
