"""Tensor creation and shape rules (shared C-like): constants, ranges, splat, broadcast, reshapes, transposes,
join/split/cat and gather. They build generators that re-index their source; a register tile read out of its layout
is published to local memory by the consuming loop (see `context.py`)."""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.attrs import DenseAttr, FloatAttr, IntegerAttr
from triton_backend_sdk.ir.core import Op

from . import ctypes as CT
from .context import Idx, RenderContext, Tile, check_pow2, numel
from .rules import CSTYLE_RULES as RULES


def _result_tile(
    ctx: RenderContext, op: Op, gen: Callable[[Idx], str], cost: int, index_only: bool, index: int = 0
) -> None:
    res = op.results[index]
    check_pow2(res.type.shape, ctx.backend, op.loc)
    ctx.define(res, Tile(res.type.shape, ctx.ctype(res), gen=gen, cost=cost, index_only=index_only))


def _src_info(ctx: RenderContext, x: object) -> tuple[int, bool]:
    if isinstance(x, Tile):
        return (x.cost if x.reg is None else 0), (x.reg is None and x.index_only)
    return 0, True


@RULES.register(O.Constant)
def render_constant(ctx: RenderContext, op: O.Constant) -> None:
    a = op.value
    res = op.result
    ctype = ctx.ctype(res)
    if isinstance(a, (IntegerAttr, FloatAttr)):
        ctx.define(res, CT.literal(a.value, res.type))
        return
    if not isinstance(a, DenseAttr):
        raise ctx.unsupported(f"constant {a!r}", op)
    check_pow2(res.type.shape, ctx.backend, op.loc)
    if a.is_splat:
        lit = CT.literal(a.values[0], res.type)
        ctx.define(res, Tile(res.type.shape, ctype, gen=lambda idx: lit, cost=0, index_only=True))
        return
    name = ctx.fresh("cst")
    values = ", ".join(CT.literal(v, res.type) for v in a.values)
    ctx.emit(f"const {ctype} {name}[{len(a.values)}] = {{{values}}};")
    ctx.define(res, Tile(res.type.shape, ctype, gen=lambda idx: f"{name}[{idx.lin}]", cost=1, index_only=True))


@RULES.register(O.MakeRange)
def render_make_range(ctx: RenderContext, op: O.MakeRange) -> None:
    start = op.start
    off = f" + {start}" if start else ""
    _result_tile(ctx, op, lambda idx: f"((int){idx.dim(0)}{off})", 1, True)


@RULES.register(O.Splat)
def render_splat(ctx: RenderContext, op: O.Splat) -> None:
    s = ctx.scalar(op.src)
    _result_tile(ctx, op, lambda idx: s, 0, True)


@RULES.register(O.Unsplat)
def render_unsplat(ctx: RenderContext, op: O.Unsplat) -> None:
    x = ctx.get(op.src)
    ctx.define(
        op.result, x if isinstance(x, str) else _uniform_element(ctx, x, Idx(op.src.type.shape, lin="0u"), op, 0)
    )


@RULES.register(O.Broadcast)
def render_broadcast(ctx: RenderContext, op: O.Broadcast) -> None:
    x = ctx.get(op.src)
    src_shape, shape = op.src.type.shape, op.result.type.shape
    if not isinstance(x, Tile):
        _result_tile(ctx, op, lambda idx: x, 0, True)
        return
    cost, index_only = _src_info(ctx, x)
    if src_shape == shape:
        _result_tile(ctx, op, lambda idx: ctx.element(x, idx), cost, index_only)
        return

    def gen(idx: Idx) -> str:
        dims = [idx.dim(k) if src_shape[k] == shape[k] else "0u" for k in range(len(shape))]
        return ctx.element(x, Idx.of_dims(src_shape, dims))

    _result_tile(ctx, op, gen, cost, index_only)


@RULES.register(O.ExpandDims, O.Reshape)
def render_reshape(ctx: RenderContext, op: Op) -> None:
    x = ctx.get(op.src)
    src_shape = op.src.type.shape
    if not isinstance(x, Tile):  # a scalar reshaped to a one-element tensor
        _result_tile(ctx, op, lambda idx: x, 0, True)
        return
    cost, index_only = _src_info(ctx, x)
    # a tile of >= VEC*L elements with rows of a multiple of VEC is held in runs of VEC, other shapes element-strided
    # (context.VEC): where the two layouts
    # differ, the result's register slot is not the source's (the element is found by its linear index)
    same_layout = ctx.vec_of(src_shape) == ctx.vec_of(op.result.type.shape)

    def gen(idx: Idx) -> str:
        src_idx = idx.reshaped(src_shape) if same_layout else Idx(src_shape, lin=idx.lin)
        return ctx.element(x, src_idx)

    _result_tile(ctx, op, gen, cost, index_only)


@RULES.register(O.Trans)
def render_trans(ctx: RenderContext, op: O.Trans) -> None:
    x = ctx.get(op.src)
    src_shape, order = op.src.type.shape, op.order
    cost, index_only = _src_info(ctx, x)

    def gen(idx: Idx) -> str:
        dims = ["0u"] * len(src_shape)
        for i, k in enumerate(order):
            dims[k] = idx.dim(i)
        return ctx.element(x, Idx.of_dims(src_shape, dims))

    _result_tile(ctx, op, gen, cost, index_only)


@RULES.register(O.Join)
def render_join(ctx: RenderContext, op: O.Join) -> None:
    a, b = ctx.get(op.lhs), ctx.get(op.rhs)
    src_shape = op.lhs.type.shape
    ca, ia = _src_info(ctx, a)
    cb, ib = _src_info(ctx, b)

    def gen(idx: Idx) -> str:
        inner = Idx.of_dims(src_shape, idx.dims[:-1]) if src_shape else Idx((), lin="0u")
        last = idx.dim(len(src_shape))
        return f"({last} ? {ctx.element(b, inner)} : {ctx.element(a, inner)})"

    _result_tile(ctx, op, gen, ca + cb + 1, ia and ib)


@RULES.register(O.Split)
def render_split(ctx: RenderContext, op: O.Split) -> None:
    x = ctx.get(op.src)
    src_shape = op.src.type.shape
    cost, index_only = _src_info(ctx, x)
    for half in (0, 1):

        def gen(idx: Idx, half: int = half) -> str:
            dims = (idx.dims if idx.shape else []) + [f"{half}u"]
            return ctx.element(x, Idx.of_dims(src_shape, dims))

        if op.results[half].type.is_tensor:
            _result_tile(ctx, op, gen, cost, index_only, index=half)
        elif not isinstance(x, Tile):
            ctx.define(op.results[half], x)
        else:
            ctx.define(op.results[half], _uniform_element(ctx, x, Idx.of_dims(src_shape, [f"{half}u"]), op, half))


def _uniform_element(ctx: RenderContext, x: Tile, idx: Idx, op: O.Op, index: int) -> str:
    """One element of tile `x` as a scalar every work-item holds: a register tile is spread over the group, so the
    element is read from its published copy (outside any tile loop: split of a 2-element tile to scalars)."""
    res = op.results[index]
    name = ctx.name_for(res)
    with ctx.loop_body() as (inner, base):
        value = ctx.element(x, idx)
    ctx.emit_lines(inner)
    ctx.emit(f"const {ctx.ctype(res)} {name} = {value};")
    ctx.scratch_top = base
    return name


@RULES.register(O.Cat)
def render_cat(ctx: RenderContext, op: O.Cat) -> None:
    a, b = ctx.get(op.lhs), ctx.get(op.rhs)
    sa, sb = op.lhs.type.shape, op.rhs.type.shape
    ca, ia = _src_info(ctx, a)
    cb, ib = _src_info(ctx, b)
    n0 = sa[0]

    def gen(idx: Idx) -> str:
        d = idx.dims
        ea = ctx.element(a, Idx.of_dims(sa, d))
        eb = ctx.element(b, Idx.of_dims(sb, [f"({d[0]} - {n0}u)", *d[1:]]))
        return f"({d[0]} < {n0}u ? {ea} : {eb})"

    _result_tile(ctx, op, gen, ca + cb + 1, ia and ib)


@RULES.register(O.Gather)
def render_gather(ctx: RenderContext, op: O.Gather) -> None:
    src, ind = ctx.get(op.src), ctx.get(op.indices)
    src_shape, axis = op.src.type.shape, op.axis
    n = src_shape[axis]

    def gen(idx: Idx) -> str:
        dims = list(idx.dims)
        dims[axis] = f"((uint)({ctx.element(ind, idx)}) & {n - 1}u)"
        return ctx.element(src, Idx.of_dims(src_shape, dims))

    cs, _ = _src_info(ctx, src)
    ci, _ = _src_info(ctx, ind)
    _result_tile(ctx, op, gen, cs + ci + 2, False)


@RULES.register(O.GetProgramId)
def render_program_id(ctx: RenderContext, op: O.GetProgramId) -> None:
    ctx.define(op.result, f"tb_pid{op.axis}")


@RULES.register(O.GetNumPrograms)
def render_num_programs(ctx: RenderContext, op: O.GetNumPrograms) -> None:
    ctx.define(op.result, f"tb_npid{op.axis}")


def tile_numel(x: object) -> int:
    return x.numel if isinstance(x, Tile) else 1


__all__ = ["numel", "tile_numel"]
