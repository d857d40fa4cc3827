"""The conformance cases: kernels with seeded inputs and exact or float64 references, runnable on any backend.

A `Case` names the TTIR op or feature it exercises (`feature`, for a per-feature report), the dtypes and shapes it
runs at, an input builder (dtype, shape, seeded generator → a `Launch`: kernel arguments, grid, constexprs and which
arguments are outputs), a reference computed from the inputs (torch in float64, or exact integer arithmetic) and a
`Tolerance`. Family modules register their cases on import; `all_cases()` lists them in registration order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .tolerance import EXACT, Tolerance, normwise, ulp


@dataclass
class Launch:
    """One run of a case: positional kernel arguments, the grid and constexprs; `outputs` index into `args`."""

    args: list[Any]
    grid: tuple[int, ...]
    outputs: tuple[int, ...]
    constexprs: dict[str, Any] = field(default_factory=dict)
    #: extra compile options for `kernel[grid](..., **options)` (e.g. debug=True)
    options: dict[str, Any] = field(default_factory=dict)

    def clone(self) -> Launch:
        args = [a.clone() if isinstance(a, torch.Tensor) else _clone_descriptor(a) for a in self.args]
        return Launch(args, self.grid, self.outputs, dict(self.constexprs), dict(self.options))


def _clone_descriptor(a: Any) -> Any:
    """A host TensorDescriptor over a copy of its base tensor; other arguments as they are."""
    base = getattr(a, "base", None)
    if isinstance(base, torch.Tensor) and hasattr(a, "block_shape"):
        import dataclasses

        return dataclasses.replace(a, base=base.clone())
    return a


Builder = Callable[[str, tuple[int, ...], torch.Generator], Launch]
Reference = Callable[[Launch, str], list[torch.Tensor]]


@dataclass(frozen=True)
class Case:
    name: str
    feature: str
    kernel: Any
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    build: Builder
    reference: Reference
    tolerance: Tolerance | Callable[[str], Tolerance] = EXACT
    #: whether Triton's interpreter can run this case (it has no bfloat16, for one)
    interpreter: bool = True
    note: str = ""
    #: the oldest Triton whose frontend/runtime compiles this case; the package needs >= 3.7, but the GPU machine
    #: of the device tool has 3.6, where the op suite runs from a staged checkout
    min_triton: tuple[int, int] = (3, 0)

    def runs_on_this_triton(self) -> bool:
        import triton

        return tuple(int(p) for p in triton.__version__.split(".")[:2]) >= self.min_triton

    def tolerance_for(self, dtype: str) -> Tolerance:
        t = self.tolerance
        return t if isinstance(t, Tolerance) else t(dtype)

    def params(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(d, s) for d in self.dtypes for s in self.shapes]


_REGISTRY: dict[str, Case] = {}


def register(case: Case) -> Case:
    if case.name in _REGISTRY:
        raise ValueError(f"conformance case {case.name!r} is registered twice")
    _REGISTRY[case.name] = case
    return case


def all_cases() -> list[Case]:
    return list(_REGISTRY.values())


def get_case(name: str) -> Case:
    return _REGISTRY[name]


from . import (
    atomics,
    control,
    conversions,
    debugging,
    descriptors,
    dot,
    elementwise,
    math_ops,
    memory,
    random,
    reductions,
    shapes,
    tutorials,
)

__all__ = [
    "EXACT",
    "Case",
    "Launch",
    "Tolerance",
    "all_cases",
    "atomics",
    "control",
    "conversions",
    "debugging",
    "descriptors",
    "dot",
    "elementwise",
    "get_case",
    "math_ops",
    "memory",
    "normwise",
    "random",
    "reductions",
    "register",
    "shapes",
    "tutorials",
    "ulp",
]
