"""A backend's outputs against the interpreter's reference runs, element by element.

- Guard elements around each output, and elements no store reaches, must keep their sentinel bits exactly.
- Integer and bool outputs: bit-exact, where every reference run agrees (elsewhere the element is ill-conditioned:
  an approximate value decided it, e.g. a comparison or float -> int next to a boundary, and it is skipped).
- Float outputs: NaN where the reference runs are all NaN; otherwise, where no run is NaN and the runs agree on any
  infinity, within [lo - w - s, hi + w + s], lo/hi the runs' extremes, w = hi - lo their spread (the tolerance the
  perturbed runs measure, interp_ref.py), s one ulp of the output format where the expression has an
  approximate operation and 0 where it has none: an expression of exactly rounded operations only (+ - * / fma
  sqrt_rn floor ceil min max, casts, selects, loads) must match exactly (+0 and -0 compare equal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from . import dtypes as D
from . import refnum as R
from .gen import is_approx
from .inputs import GUARD, SENTINEL_BYTE
from .render import out_dtype
from .spec import Expr


@dataclass
class CaseResult:
    status: str  # "ok", "mismatch", "unchecked" (every element ill-conditioned)
    kind: str = ""  # for a mismatch: guard, int, float, float-approx
    elements: int = 0
    bad: int = 0
    skipped: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)


def _ulp(x: np.ndarray, name: str) -> np.ndarray:
    fmt = D.FORMATS[name]
    ax = np.abs(x)
    _, e = np.frexp(np.where(np.isfinite(ax) & (ax > 0), ax, 1.0))
    return np.ldexp(1.0, np.maximum(e - 1, fmt.emin) - (fmt.p - 1))


def _show(v: Any, name: str) -> Any:
    if D.is_float(name):
        f = float(v)
        return repr(f) if not np.isfinite(f) else f
    return int(v)


def compare(e: Expr, refs: list[torch.Tensor], got: torch.Tensor, max_examples: int = 5) -> CaseResult:
    """`refs`: the guarded output buffer of each reference run; `got`: the backend's."""
    name = out_dtype(e)
    ref_np = np.stack([D.to_numpy(r, name) for r in refs])
    got_np = D.to_numpy(got, name)
    n = got_np.size - 2 * GUARD
    sentinel = D.to_numpy(
        torch.full((D.TORCH[name].itemsize,), SENTINEL_BYTE, dtype=torch.uint8).view(D.TORCH[name]), name
    )
    w = D.bits(name)
    u = D.UINT_OF_BITS[w]
    guard = np.r_[0:GUARD, GUARD + n : got_np.size]
    gbad = np.flatnonzero(got_np[guard].view(u) != sentinel.view(u)[0])
    res = CaseResult("ok", elements=n)
    if gbad.size:
        res.status, res.kind, res.bad = "mismatch", "guard", int(gbad.size)
        res.examples = [
            {"guard_index": int(guard[i]) - GUARD, "got_bits": int(got_np[guard].view(u)[i])}
            for i in gbad[:max_examples]
        ]
        return res
    ref_in = ref_np[:, GUARD : GUARD + n]
    got_in = got_np[GUARD : GUARD + n]
    if not D.is_float(name):
        stable = (ref_in == ref_in[0]).all(0)
        bad = stable & (got_in != ref_in[0])
        lo = hi = ref_in[0]
        kind = "int"
    else:
        v = R.decode(ref_in.reshape(-1), name).reshape(ref_in.shape)
        g = R.decode(got_in, name)
        nan = np.isnan(v)
        all_nan, any_nan = nan.all(0), nan.any(0)
        inf = np.isinf(v).any(0)
        with np.errstate(all="ignore"):
            same = (v == v[0]).all(0)
            stable = all_nan | (~any_nan & (~inf | same))
            lo, hi = np.min(np.where(nan, np.inf, v), 0), np.max(np.where(nan, -np.inf, v), 0)
            approx = is_approx(e.node)
            slack = _ulp(np.maximum(np.abs(lo), np.abs(hi)), name) if approx else 0.0
            width = np.where(same, 0.0, hi - lo)
            inside = (g >= lo - width - slack) & (g <= hi + width + slack)
            exact_hit = same & (g == v[0])
        ok = np.where(all_nan, np.isnan(g), ~np.isnan(g) & (exact_hit | inside))
        bad = stable & ~ok
        kind = "float-approx" if approx else "float"
    res.skipped = int((~stable).sum())
    idx = np.flatnonzero(bad)
    if idx.size:
        res.status, res.kind, res.bad = "mismatch", kind, int(idx.size)
        exp = R.decode(ref_in[0], name) if D.is_float(name) else ref_in[0]
        gv = R.decode(got_in, name) if D.is_float(name) else got_in
        for i in idx[:max_examples]:
            ex = {"index": int(i), "expected": _show(exp[i], name), "got": _show(gv[i], name)}
            if D.is_float(name) and not (ref_in[:, i] == ref_in[0, i]).all():
                ex["range"] = [_show(lo[i], name), _show(hi[i], name)]
            res.examples.append(ex)
    elif res.skipped == n and n > 0:
        res.status = "unchecked"
    return res
