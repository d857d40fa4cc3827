"""Program ids and grid sizes on three axes, make_range, and the shape ops: splat, broadcast, expand_dims,
reshape, trans/permute, join/split/interleave, cat, gather, histogram, flip."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import rand
from .tolerance import EXACT


@triton.jit
def grid3d_kernel(out_ptr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    lin = (z * ny + y) * nx + x
    r = tl.arange(0, 4)
    v = tl.where(r == 0, x, tl.where(r == 1, y, tl.where(r == 2, z, nx * 10000 + ny * 100 + nz)))
    tl.store(out_ptr + lin * 4 + r, v)


def _grid_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    nx, ny, nz = shape
    return Launch([torch.full((nx * ny * nz * 4,), -1, dtype=torch.int32)], shape, (0,))


def _grid_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    nx, ny, nz = launch.grid
    z, y, x = torch.meshgrid(torch.arange(nz), torch.arange(ny), torch.arange(nx), indexing="ij")
    tot = torch.full_like(x, nx * 10000 + ny * 100 + nz)
    return [torch.stack([x, y, z, tot], -1).flatten().int()]


register(
    Case(
        "program_id_3d",
        "tt.get_program_id",
        grid3d_kernel,
        ("int32",),
        ((1, 1, 1), (5, 3, 2), (2, 1, 7)),
        _grid_build,
        _grid_ref,
        EXACT,
    )
)


@triton.jit
def shape_ops_kernel(x_ptr, out_ptr, OP: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    if OP == "trans":
        y = tl.trans(x)
    elif OP == "reshape":
        y = tl.reshape(x, (N, M))
    elif OP == "permute3":
        y = tl.reshape(tl.permute(tl.reshape(x, (2, M // 2, N)), (1, 2, 0)), (N, M))
    elif OP == "broadcast":
        y = x + tl.broadcast_to(tl.expand_dims(tl.max(x, axis=1), 1), (M, N))
    elif OP == "join_split":
        a, b = tl.split(tl.join(x, x + 1))
        y = tl.trans(b * 2 - a)
    elif OP == "interleave":
        y = tl.reshape(tl.interleave(x, x * 3), (N * 2, M))
    elif OP == "cat":
        y = tl.reshape(tl.cat(x, x * 2, can_reorder=False), (N, M * 2))
    elif OP == "flip":
        y = tl.trans(tl.flip(x, 1))
    else:
        tl.static_assert(False, "unknown op")
    ro = tl.arange(0, y.shape[0])
    co = tl.arange(0, y.shape[1])
    tl.store(out_ptr + ro[:, None] * y.shape[1] + co[None, :], y)


def _shape_ref(op: str):
    def ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
        m, n = launch.constexprs["M"], launch.constexprs["N"]
        x = launch.args[0].reshape(m, n)
        y = {
            "trans": lambda: x.t(),
            "reshape": lambda: x.reshape(n, m),
            "permute3": lambda: x.reshape(2, m // 2, n).permute(1, 2, 0).reshape(n, m),
            "broadcast": lambda: x + x.max(1, keepdim=True).values,
            "join_split": lambda: ((x + 1) * 2 - x).t(),
            "interleave": lambda: torch.stack([x, x * 3], -1).reshape(n * 2, m),
            "cat": lambda: torch.cat([x, x * 2]).reshape(n, m * 2),
            "flip": lambda: x.flip(1).t(),
        }[op]()
        return [y.contiguous().flatten()]

    return ref


def _shape_case(op: str, out_factor: int = 1) -> Case:
    """`cat` uses can_reorder=False, which Triton's frontend accepts from 3.7 on."""

    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        m, n = shape
        x = rand((m * n,), dtype, g, 1, 50)
        return Launch([x, torch.empty(m * n * out_factor, dtype=x.dtype)], (1,), (1,), {"OP": op, "M": m, "N": n})

    feature = {
        "permute3": "tt.trans",
        "join_split": "tt.join|split",
        "interleave": "tt.join",
        "flip": "tt.reshape",
        "broadcast": "tt.broadcast",
    }.get(op, f"tt.{op}")
    return register(
        Case(
            f"shape_{op}",
            feature,
            shape_ops_kernel,
            ("int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"),
            ((2, 4), (16, 32)),
            build,
            _shape_ref(op),
            EXACT,
            min_triton=(3, 7) if op == "cat" else (3, 0),
        )
    )


for _op in ("trans", "reshape", "permute3", "broadcast", "join_split", "flip"):
    _shape_case(_op)
_shape_case("interleave", 2)
_shape_case("cat", 2)


@triton.jit
def gather_hist_kernel(x_ptr, idx_ptr, out_ptr, hist_ptr, N: tl.constexpr, BINS: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    i = tl.load(idx_ptr + r)
    tl.store(out_ptr + r, tl.gather(x, i, 0))
    tl.store(hist_ptr + tl.arange(0, BINS), tl.histogram(i, BINS))


def _gh_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x = rand((n,), dtype, g)
    idx = torch.randint(0, n, (n,), generator=g, dtype=torch.int32)
    return Launch([x, idx, torch.empty_like(x), torch.empty(16, dtype=torch.int32)], (1,), (2, 3), {"N": n, "BINS": 16})


def _gh_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x, idx = launch.args[0], launch.args[1].long()
    return [x[idx], torch.bincount(idx[idx < 16], minlength=16)[:16].int()]


register(
    Case(
        "gather_histogram",
        "tt.gather",
        gather_hist_kernel,
        ("int32", "float16", "float32", "float64"),
        ((16,), (64,)),
        _gh_build,
        _gh_ref,
        EXACT,
    )
)
