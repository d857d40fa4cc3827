"""`tt.reduce` and `tt.scan`: built-in reductions on each axis of 2-D and 3-D tiles, argmin/argmax (first index on
ties), custom combine functions (tuples), cumulative sums/products and reverse associative scans."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import FLOATS, INTS, rand
from .tolerance import EXACT, normwise


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _argmax_combine(v1, i1, v2, i2):
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@triton.jit
def _out_offsets(r):
    om = tl.arange(0, r.shape[0])[:, None, None]
    on = tl.arange(0, r.shape[1])[None, :, None]
    ok = tl.arange(0, r.shape[2])[None, None, :]
    return om * r.shape[1] * r.shape[2] + on * r.shape[2] + ok


@triton.jit
def reduce_kernel(
    x_ptr, out_ptr, idx_ptr, OP: tl.constexpr, AXIS: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr
):
    rm = tl.arange(0, M)[:, None, None]
    rn = tl.arange(0, N)[None, :, None]
    rk = tl.arange(0, K)[None, None, :]
    x = tl.load(x_ptr + rm * N * K + rn * K + rk)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS, keep_dims=True)
    elif OP == "max":
        r = tl.max(x, axis=AXIS, keep_dims=True)
    elif OP == "min":
        r = tl.min(x, axis=AXIS, keep_dims=True)
    elif OP == "argmax":
        r, i = tl.max(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=True, keep_dims=True)
        tl.store(idx_ptr + _out_offsets(r), i)
    elif OP == "argmin":
        r, i = tl.min(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=True, keep_dims=True)
        tl.store(idx_ptr + _out_offsets(r), i)
    elif OP == "xor_sum":
        r = tl.xor_sum(x, axis=AXIS, keep_dims=True)
    elif OP == "prod":
        r = tl.reduce(x, AXIS, _mul, keep_dims=True)
    elif OP == "custom_argmax":
        idx = (rm * 0 + rn * 0 + rk * 0) + (rm if AXIS == 0 else (rn if AXIS == 1 else rk))
        r, i = tl.reduce((x, idx), AXIS, _argmax_combine, keep_dims=True)
        tl.store(idx_ptr + _out_offsets(r), i)
    elif OP == "revscan_argmax":
        idx = (rm * 0 + rn * 0 + rk * 0) + (rm if AXIS == 0 else (rn if AXIS == 1 else rk))
        r, i = tl.associative_scan((x, idx), AXIS, _argmax_combine, reverse=True)
        tl.store(idx_ptr + _out_offsets(r), i)
    elif OP == "cumsum":
        r = tl.cumsum(x, axis=AXIS)
    elif OP == "cumprod":
        r = tl.cumprod(x, axis=AXIS)
    elif OP == "revcumsum":
        r = tl.cumsum(x, axis=AXIS, reverse=True)
    else:
        tl.static_assert(False, "unknown op")
    tl.store(out_ptr + _out_offsets(r), r)


def _reverse_running_argmax(x: torch.Tensor, axis: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For each position: the max over it and everything after it along `axis`, and that max's first index."""
    v = x.movedim(axis, -1).clone()
    i = torch.arange(v.shape[-1]).expand(v.shape).clone()
    for k in range(v.shape[-1] - 2, -1, -1):
        take = (v[..., k + 1] > v[..., k]) | ((v[..., k + 1] == v[..., k]) & (i[..., k + 1] < i[..., k]))
        v[..., k] = torch.where(take, v[..., k + 1], v[..., k])
        i[..., k] = torch.where(take, i[..., k + 1], i[..., k])
    return v.movedim(-1, axis), i.movedim(-1, axis)


def _reference(op: str):
    def ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
        c = launch.constexprs
        axis = c["AXIS"]
        x = launch.args[0].reshape(c["M"], c["N"], c["K"])
        exact_int = x.dtype in (torch.int32, torch.int64, torch.int8, torch.int16)
        xd = x if exact_int else x.double()
        idx = torch.zeros(1)
        if op == "sum":
            r = xd.sum(axis, keepdim=True)
        elif op in ("max", "argmax", "custom_argmax"):
            r, idx = xd.max(axis, keepdim=True)
        elif op in ("min", "argmin"):
            r, idx = xd.min(axis, keepdim=True)
        elif op == "xor_sum":
            r = x.clone().movedim(axis, 0)
            acc = r[0].clone()
            for k in range(1, r.shape[0]):
                acc ^= r[k]
            r = acc.unsqueeze(0).movedim(0, axis)
        elif op == "prod":
            r = xd.prod(axis, keepdim=True)
        elif op == "cumsum":
            r = xd.cumsum(axis)
        elif op == "cumprod":
            r = xd.cumprod(axis)
        elif op == "revscan_argmax":
            r, idx = _reverse_running_argmax(x, axis)
        else:
            r = xd.flip(axis).cumsum(axis).flip(axis)
        if exact_int:
            r = r.to(x.dtype)
        outs = [r.flatten()]
        if op in ("argmax", "argmin", "custom_argmax", "revscan_argmax"):
            outs.append(idx.int().flatten())
        return outs

    return ref


def _case(op: str, dtypes: tuple[str, ...]) -> Case:
    with_idx = op in ("argmax", "argmin", "custom_argmax", "revscan_argmax")

    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        m, n, k, axis = shape
        lo, hi = (0.5, 1.5) if op in ("prod", "cumprod") else (1, 9)
        x = rand((m * n * k,), dtype, g, lo, hi)
        if with_idx:  # ties: repeat values so that the first index must win
            x = x.reshape(m, n, k)
            x = torch.round(x.double() * 2).to(x.dtype).flatten() if dtype in FLOATS else (x % 4).flatten()
        out_n = m * n * k if op.startswith(("cum", "rev")) else m * n * k // (m, n, k)[axis]
        return Launch(
            [x, torch.empty(out_n, dtype=x.dtype), torch.empty(out_n, dtype=torch.int32)],
            (1,),
            (1, 2) if with_idx else (1,),
            {"OP": op, "AXIS": axis, "M": m, "N": n, "K": k},
        )

    def tol(dtype: str):
        exact_ops = ("max", "min", "argmax", "argmin", "custom_argmax", "revscan_argmax")
        return EXACT if dtype in INTS or op in exact_ops else normwise(8)

    feature = "tt.scan" if op.startswith(("cum", "rev")) else "tt.reduce"
    return register(
        Case(
            f"reduce_{op}",
            feature,
            reduce_kernel,
            dtypes,
            ((1, 1, 1, 0), (4, 8, 16, 0), (4, 8, 16, 1), (4, 8, 16, 2), (2, 32, 2, 1)),
            build,
            _reference(op),
            tol,
        )
    )


_ALL = ("int8", "int32", "int64", "float16", "bfloat16", "float32", "float64")
for _op in ("sum", "max", "min", "argmax", "argmin", "custom_argmax", "cumsum"):
    _case(_op, _ALL)
_case("xor_sum", ("int8", "int32", "int64"))
_case("prod", ("float32", "float64"))
_case("cumprod", ("float32", "float64"))
_case("revcumsum", ("int32", "float32", "float64"))
_case("revscan_argmax", ("int32", "float16", "float32"))
