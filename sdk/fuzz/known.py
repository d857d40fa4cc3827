"""Bugs the fuzzer found that are not fixed yet, each with the regression test that pins it (tests/test_fuzz.py,
`xfail(strict=True)`: it fails once the bug is fixed, and then the entry goes).

`matches(spec, node)` says whether a node of a kernel has the construct that triggers the bug. The report marks a
failure whose kernel has such a node as known; `Generator(avoid=...)` (`triton-sdk fuzz --avoid-known`, and the CI
slice) leaves the constructs out, so that a known compile error does not hide the other cases of its kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .spec import KernelSpec, Node

OPENCL = ("opencl", "opencl@wg128")


@dataclass(frozen=True)
class KnownBug:
    test: str  # the regression test in tests/test_fuzz.py
    backends: tuple[str, ...]
    summary: str
    matches: Callable[[KernelSpec, Node], bool]
    #: (dtype, fill) -> the fill a new input gets where the bug is avoided (values that trigger it left out)
    safe_fill: Callable[[str, str], str] | None = None


#: none open: the fp16 signaling-NaN bits opencl quieted (fuzz seed 300 kernel 122) move unchanged since its f16 loads
#: and stores keep NaN bits (test_fuzz_regression_fp16_signaling_nan_bits)
KNOWN: tuple[KnownBug, ...] = ()


def known_for(backends: list[str] | tuple[str, ...]) -> list[KnownBug]:
    return [k for k in KNOWN if any(b in k.backends for b in backends)]


def matching(spec: KernelSpec, backend: str, case: int | None) -> list[KnownBug]:
    """The known bugs of `backend` that case `case` (None: any case) of `spec` has the construct of."""
    exprs = spec.exprs if case is None else [spec.exprs[case]]
    return [k for k in KNOWN if backend in k.backends and any(k.matches(spec, n) for e in exprs for n in e.node.walk())]
