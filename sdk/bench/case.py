"""What a benchmark case is (sdk/bench/cases.py and cases_inductor.py define them): its sizes per mode, how it
builds our launch and its peers for one size and backend, and the correctness check every case records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["Case", "Prepared", "Size", "check"]
Size = Mapping[str, int]


@dataclass
class Prepared:
    """One case at one size on one backend, ready to time."""

    ours: Callable[[], object]
    peers: dict[str, Callable[[], object]]
    check: Callable[[], dict[str, Any]]
    work: float  # bytes (metric GB/s) or flops (GFLOP/s) of one call of `ours`; launches per call for us/launch
    config: str = ""  # how `ours` was configured where the case chose it (the matmul's autotuned tiles): reported


@dataclass(frozen=True)
class Case:
    name: str
    metric: str  # "GB/s": memory-bound, bytes read + written; "GFLOP/s"; "us/launch"
    sizes: Mapping[str, Size]  # per mode
    build: Callable[[Size, str], Prepared]  # (size, backend name; "interpreter" for the interpreter child)
    interp_sizes: Mapping[str, Size] | None = None  # the interpreter peer's (smaller) size per mode; None: no peer
    numpy: bool = False  # a numpy/OpenBLAS peer in a child process
    rounds: Mapping[str, tuple[int, int]] = field(
        default_factory=lambda: {"full": (7, 3), "quick": (5, 2), "smoke": (2, 1)}
    )

    def label(self, size: Size) -> str:
        """`n=2^24`, `M=4096 N=4096`: the size as the tables print it."""
        return " ".join(
            f"{k}=2^{v.bit_length() - 1}" if v > 8192 and v & (v - 1) == 0 else f"{k}={v}" for k, v in size.items()
        )


def check(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> dict[str, Any]:
    """torch.testing.assert_close's verdict with the largest absolute error (recorded, not raised)."""
    err = (out.double() - ref.double()).abs().max().item() if out.numel() else 0.0
    try:
        torch.testing.assert_close(out, ref, rtol=rtol, atol=atol)
        ok, message = True, ""
    except AssertionError as e:
        ok, message = False, str(e).splitlines()[0]
    return {"ok": ok, "max_abs_err": err, "rtol": rtol, "atol": atol, "message": message}
