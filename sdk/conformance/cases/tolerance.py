"""How a case's outputs are compared with its reference.

- `EXACT`: bit-for-bit (integers, bitwise ops, data movement, comparisons); NaN equals NaN.
- `ulp(n)`: floats whose result is one correctly rounded (or nearly) operation of the reference: |got - want| <= n
  units in the last place of the output dtype at `want` (subnormal spacing below the normal range). The reference is
  computed in float64 and not rounded first, so an exactly rounded result is within 0.5 ulp; for float64 outputs the
  bound is at least 1 ulp, the reference being rounded to float64 itself.
- `normwise(k)`: reductions, scans and dots, whose summation order differs between backends: |got - want| <=
  k * eps(dtype) * (|want| + max|want|), eps being the dtype's machine epsilon.
NaN must match NaN and infinities must match exactly under every kind.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

#: (mantissa bits, smallest normal exponent) per float dtype
_FLOAT_BITS = {
    torch.float16: (10, -14),
    torch.bfloat16: (7, -126),
    torch.float32: (23, -126),
    torch.float64: (52, -1022),
}


def ulp_of(want: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Spacing of `dtype` floats around each value of `want` (float64)."""
    mbits, emin = _FLOAT_BITS[dtype]
    mag = want.abs().clamp_min(2.0**emin)
    e = torch.floor(torch.log2(mag))
    return torch.pow(2.0, e - mbits)


@dataclass(frozen=True)
class Tolerance:
    kind: str  # "exact" | "ulp" | "normwise"
    amount: float = 0.0

    def __str__(self) -> str:
        return self.kind if self.kind == "exact" else f"{self.kind}({self.amount:g})"

    def compare(self, got: torch.Tensor, want: torch.Tensor) -> tuple[bool, float, str]:
        """(passed, max error, first mismatch description). Error: mismatches for exact, ulps or eps-multiples."""
        if got.shape != want.shape:
            return False, float("inf"), f"shape {tuple(got.shape)} != expected {tuple(want.shape)}"
        if self.kind == "exact" or not got.dtype.is_floating_point:
            g, w = got.cpu(), want.cpu().to(got.dtype) if want.dtype != got.dtype else want.cpu()
            if got.dtype.is_floating_point:
                bad = ~((g == w) | (g.isnan() & w.isnan()))
            else:
                bad = g != w
            n = int(bad.sum())
            if n == 0:
                return True, 0.0, ""
            i = int(bad.flatten().nonzero()[0])
            return (
                False,
                float(n),
                (
                    f"{n} of {bad.numel()} elements differ; first at flat index {i}: got "
                    f"{g.flatten()[i].item()!r}, expected {w.flatten()[i].item()!r}"
                ),
            )
        g, w = got.double(), want.double()
        nan_ok = g.isnan() == w.isnan()
        inf_w = w.isinf()
        inf_ok = torch.where(inf_w | g.isinf(), g == w, torch.ones_like(nan_ok))
        finite = ~(g.isnan() | w.isnan() | inf_w | g.isinf())
        err = torch.where(finite, (g - w).abs(), torch.zeros_like(g))
        if self.kind == "ulp":
            scale = ulp_of(w.where(finite, torch.ones_like(w)), got.dtype)
        else:
            mbits, _ = _FLOAT_BITS[got.dtype]
            top = w.where(finite, torch.zeros_like(w)).abs().max() if w.numel() else torch.tensor(0.0)
            scale = 2.0**-mbits * (w.abs().where(finite, torch.zeros_like(w)) + top).clamp_min(1e-300)
        ratio = err / scale
        amount = self.amount
        if self.kind == "ulp" and got.dtype == torch.float64:
            amount = max(amount, 1.0)  # the float64 reference is itself rounded (and torch's is not always exact)
        bad = ~nan_ok | ~inf_ok | (ratio > amount)
        worst = float(ratio.max()) if ratio.numel() else 0.0
        if not bool(bad.any()):
            return True, worst, ""
        i = int(bad.flatten().nonzero()[0])
        return (
            False,
            worst,
            (
                f"{int(bad.sum())} of {bad.numel()} elements outside {self}; first at flat index {i}: "
                f"got {g.flatten()[i].item()!r}, expected {w.flatten()[i].item()!r}"
            ),
        )


EXACT = Tolerance("exact")


def ulp(n: float) -> Tolerance:
    return Tolerance("ulp", n)


def normwise(k: float) -> Tolerance:
    return Tolerance("normwise", k)
