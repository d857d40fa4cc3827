"""The dtypes the fuzzer generates: Triton's name, torch's dtype, storage, and the float formats' parameters.

Names are Triton's (`tl.<name>`). Every dtype has a torch dtype of the same width, so inputs and outputs are plain
torch tensors on every backend; fp8 and bf16 values are handled as their bit patterns where numpy has no type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..conformance.cases.inputs import TORCH as _CASE_TORCH

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
FP8 = ("float8e4nv", "float8e5")
FLOATS = ("float16", "bfloat16", "float32", "float64") + FP8
BOOL = "int1"
ALL = INTS + FLOATS


@dataclass(frozen=True)
class FloatFormat:
    """A binary float format: `p` significand bits (the implicit one included), smallest normal exponent `emin`
    (value 2**emin), the largest finite value; `inf`: whether it has infinities (overflow rounds to them);
    `saturate`: a narrowing conversion clamps out-of-range values, infinities included, to +-max (fp8, as PTX's
    `cvt.rn.satfinite` and the SDK do)."""

    name: str
    p: int
    emin: int
    max: float
    inf: bool
    saturate: bool

    @property
    def eps(self) -> float:
        """The distance from 1.0 to the next larger value."""
        return 2.0 ** (1 - self.p)

    @property
    def tiny(self) -> float:
        """The smallest positive subnormal."""
        return 2.0 ** (self.emin - self.p + 1)


FORMATS: dict[str, FloatFormat] = {
    "float16": FloatFormat("float16", 11, -14, 65504.0, True, False),
    "bfloat16": FloatFormat("bfloat16", 8, -126, float.fromhex("0x1.fep127"), True, False),
    "float32": FloatFormat("float32", 24, -126, float.fromhex("0x1.fffffep127"), True, False),
    "float64": FloatFormat("float64", 53, -1022, float.fromhex("0x1.fffffffffffffp1023"), True, False),
    "float8e4nv": FloatFormat("float8e4nv", 4, -6, 448.0, False, True),
    "float8e5": FloatFormat("float8e5", 3, -14, 57344.0, True, True),
}

#: the conformance cases' table (bool spelled as Triton's int1) plus the fp8 formats
TORCH: dict[str, torch.dtype] = {
    **{k: v for k, v in _CASE_TORCH.items() if k != "bool"},
    "float8e4nv": torch.float8_e4m3fn,
    "float8e5": torch.float8_e5m2,
    "int1": torch.bool,
}

#: the numpy dtype a value is held in on the host: the integer of the same width for bf16/fp8 (their bits)
NUMPY: dict[str, np.dtype] = {
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(np.uint16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "float8e4nv": np.dtype(np.uint8),
    "float8e5": np.dtype(np.uint8),
    "int1": np.dtype(np.bool_),
}

#: the unsigned integer dtype of each width in bits, for bit views
UINT_OF_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def bits(name: str) -> int:
    """Width in bits (int1: 8, its storage)."""
    return 8 if name == BOOL else NUMPY[name].itemsize * 8


def is_int(name: str) -> bool:
    return name in INTS


def is_signed(name: str) -> bool:
    return name in SIGNED


def is_float(name: str) -> bool:
    return name in FLOATS


def int_bounds(name: str) -> tuple[int, int]:
    w = bits(name)
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if name in SIGNED else (0, (1 << w) - 1)


def same_width(name: str) -> list[str]:
    """The dtypes a value of `name` can be bitcast to (same width, other dtype)."""
    return [d for d in ALL if d != name and bits(d) == bits(name)]


def to_numpy(t: torch.Tensor, name: str) -> np.ndarray:
    """A tensor's values as numpy (bf16/fp8: the bit patterns; int1: bool)."""
    t = t.detach().cpu().contiguous()
    if name in ("bfloat16",) + FP8:
        t = t.view(torch.uint16 if name == "bfloat16" else torch.uint8)
    return t.numpy().astype(NUMPY[name], copy=False)


def from_numpy(a: np.ndarray, name: str) -> torch.Tensor:
    """The inverse of `to_numpy`."""
    t = torch.from_numpy(np.ascontiguousarray(a.astype(NUMPY[name], copy=False)))
    if name in ("bfloat16",) + FP8:
        t = t.view(TORCH[name])
    return t
