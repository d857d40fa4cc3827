"""A kernel's arguments rebuilt from its spec: inputs (values from `input_seed`, laid out with the spec's strides)
and outputs (guarded, sentinel-filled buffers: a masked-off lane, or a write past an output's end, shows as a
changed sentinel).

Value mixtures per dtype (`Input.fill`): integers from [-8, 8], the whole range, or edge values (0, +-1, the
extremes, shift widths); floats as small dyadic values (k/4), normal values of magnitudes 1e-3..1e3, special values
(+-0, +-inf, NaN, +-max, the smallest normal and subnormal) and random bit patterns; "mixed" draws each element
from all of them. fp8/bf16 values are rounded to the format (nearest even, saturating).
"""

from __future__ import annotations

import numpy as np
import torch

from . import dtypes as D
from . import refnum as R
from .render import out_dtype, out_shape
from .spec import Input, KernelSpec, used_inputs

#: elements before and after each output (sentinels, compared like the output)
GUARD = 8
SENTINEL_BYTE = 0xA5


def _int_values(rng: np.random.Generator, n: int, dtype: str, fill: str) -> np.ndarray:
    lo, hi = D.int_bounds(dtype)
    w = D.bits(dtype)
    small = rng.integers(max(lo, -8), min(hi, 8) + 1, n).astype(object)
    full = rng.integers(0, 1 << 63, n, dtype=np.uint64).astype(object)
    full = np.array([(int(v) * 2 + int(b)) % (1 << w) for v, b in zip(full, rng.integers(0, 2, n))], dtype=object)
    edges = [0, 1, hi, lo, hi - 1, lo + 1, 2, w - 1, w, w + 1, 2 * w]
    edges += [-1, -2] if D.is_signed(dtype) else [hi // 2 + 1]
    edge = np.array([edges[i] for i in rng.integers(0, len(edges), n)], dtype=object)
    pick = {"small": 0, "full": 1, "special": 2}.get(fill)
    choice = np.full(n, pick) if pick is not None else rng.choice(3, n, p=[0.5, 0.3, 0.2])
    vals = np.where(choice == 0, small, np.where(choice == 1, full, edge))
    mask = (1 << w) - 1
    u = np.array([int(v) & mask for v in vals], dtype=np.uint64)
    return u.astype(D.UINT_OF_BITS[w]).view(D.NUMPY[dtype])


def _float_values(rng: np.random.Generator, n: int, dtype: str, fill: str) -> np.ndarray:
    fmt = D.FORMATS[dtype]
    w = D.bits(dtype)
    small = rng.integers(-32, 33, n) / 4.0
    normal = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, fmt.max, -fmt.max, 2.0**fmt.emin, -fmt.tiny, fmt.tiny, 1.0, -1.0]
    special = np.array([specials[i] for i in rng.integers(0, len(specials), n)])
    raw = rng.integers(0, 1 << 63, n, dtype=np.uint64) ^ rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    bits = (raw >> np.uint64(64 - w)).astype(D.UINT_OF_BITS[w])
    pick = {"small": 0, "full": 3, "special": 2}.get(fill)
    choice = np.full(n, pick) if pick is not None else rng.choice(4, n, p=[0.4, 0.35, 0.1, 0.15])
    values = np.where(choice == 0, small, np.where(choice == 1, normal, special))
    stored = R.encode(R.round_float(values, dtype), dtype)
    if dtype in ("float16", "float32", "float64"):
        stored = stored.view(D.UINT_OF_BITS[w])
    out = np.where(choice == 3, bits, stored.astype(D.UINT_OF_BITS[w]))
    return out.astype(D.UINT_OF_BITS[w]).view(D.NUMPY[dtype])


def values(rng: np.random.Generator, n: int, dtype: str, fill: str) -> np.ndarray:
    return (_int_values if D.is_int(dtype) else _float_values)(rng, n, dtype, fill)


def _layout(spec: KernelSpec, inp: Input, rng: np.random.Generator) -> torch.Tensor:
    M, N = spec.M, spec.N
    if spec.ndim == 1:
        n = M * (2 if inp.layout == "s" else 1)
        base = D.from_numpy(values(rng, n, inp.dtype, inp.fill), inp.dtype)
        return base[::2] if inp.layout == "s" else base
    shape = {"c": (M, N), "t": (N, M), "p": (M, N + 3), "s": (M, 2 * N)}[inp.layout]
    flat = D.from_numpy(values(rng, shape[0] * shape[1], inp.dtype, inp.fill), inp.dtype)
    base = flat.view(shape)
    return {"c": base, "t": base.t(), "p": base[:, :N], "s": base[:, ::2]}[inp.layout]


def make_inputs(spec: KernelSpec) -> dict[str, torch.Tensor]:
    """The spec's used inputs, by name (the same values for the same spec on every process)."""
    rng = np.random.default_rng(spec.input_seed)
    used = used_inputs(spec.exprs)
    out = {}
    for inp in spec.inputs:  # every input draws its values, so that removing a case keeps the others' values
        t = _layout(spec, inp, rng)
        if inp.name in used:
            out[inp.name] = t
    return out


def make_outputs(spec: KernelSpec) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(guarded buffer, the output view passed to the kernel) for each case."""
    res = []
    for e in spec.exprs:
        shape = out_shape(spec, e)
        n = int(np.prod(shape))
        dt = D.TORCH[out_dtype(e)]
        buf = torch.full((n * dt.itemsize + 2 * GUARD * dt.itemsize,), SENTINEL_BYTE, dtype=torch.uint8).view(dt)
        res.append((buf, buf[GUARD : GUARD + n].view(shape)))
    return res


def kernel_args(spec: KernelSpec, inputs: dict[str, torch.Tensor], outputs: list[torch.Tensor]) -> list[object]:
    """Positional arguments in `render.params` order (constexprs excluded)."""
    names = [i.name for i in spec.inputs if i.name in inputs]
    args: list[object] = [inputs[n] for n in names] + list(outputs) + [spec.M, spec.N]
    for n in names:
        args += list(inputs[n].stride())
    return args
