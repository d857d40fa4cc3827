"""Constants, ranges, program ids and the shape ops (splat, broadcast, expand_dims, reshape, trans, join, split,
cat). Shape ops only re-index: they produce generators over their source, never copies (reshape of a generator
excepted, which needs its source in memory to re-linearise)."""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.analysis.tile_model import CHEAP
from triton_backend_sdk.ir import attrs as A
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.numerics_fp8 import fp8_bits

from .context import LoweringContext, Tile
from .rules import RULES
from .types import I64, PTR, Fp8Format, buffer_type, fp8_format, llvm_type


def _scalar_const(ty: ir.Type, value: float, fp8: Fp8Format | None = None) -> ir.Constant:
    if fp8 is not None:
        return ir.Constant(ty, fp8_bits(float(value), fp8))
    if isinstance(ty, ir.IntType):
        return ir.Constant(ty, int(value) & ((1 << ty.width) - 1))
    return ir.Constant(ty, float(value))


@RULES.register(O.Constant)
def lower_constant(ctx: LoweringContext, op: O.Constant) -> None:
    value = op.value
    res = op.result
    ety = llvm_type(res.type)
    fp8 = fp8_format(res.type)
    if isinstance(value, (A.IntegerAttr, A.FloatAttr, A.BoolAttr)):
        ctx.define(res, _scalar_const(ety, value.value, fp8))
        return
    assert isinstance(value, A.DenseAttr), f"arith.constant with value {value!r}"
    shape = res.type.shape
    if value.is_splat:
        c = _scalar_const(ety, value.values[0], fp8)
        ctx.define(res, Tile(shape, ety, gen=lambda b, idx: c, cost=0))
        return
    st = buffer_type(ety)
    arr_ty = ir.ArrayType(st, len(value.values))
    g = ir.GlobalVariable(ctx.module, arr_ty, name=ctx.module.get_unique_name("const"))
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ir.Constant(arr_ty, [_scalar_const(st, v, fp8) for v in value.values])
    g.type = PTR  # opaque, as for stack buffers
    ctx.define(res, Tile(shape, ety, buf=g))


@RULES.register(O.MakeRange)
def lower_make_range(ctx: LoweringContext, op: O.MakeRange) -> None:
    ety = llvm_type(op.result.type)
    start = op.start

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        v = b.trunc(idx[0], ety)
        return b.add(v, ir.Constant(ety, start), flags=["nsw"]) if start else v

    ctx.define(op.result, Tile(op.result.type.shape, ety, gen=gen, cost=1))


@RULES.register(O.GetProgramId)
def lower_program_id(ctx: LoweringContext, op: O.GetProgramId) -> None:
    ctx.define(op.result, ctx.program_ids[op.axis])


@RULES.register(O.GetNumPrograms)
def lower_num_programs(ctx: LoweringContext, op: O.GetNumPrograms) -> None:
    ctx.define(op.result, ctx.num_programs[op.axis])


@RULES.register(O.Splat)
def lower_splat(ctx: LoweringContext, op: O.Splat) -> None:
    src = ctx.get(op.src)
    if isinstance(src, Tile):  # splat of a 1-element tensor
        zero = [ir.Constant(I64, 0)] * len(src.shape)
        ctx.define(
            op.result, Tile(op.result.type.shape, src.ety, gen=lambda b, idx: src.element(b, zero), cost=src.cost)
        )
        return
    ctx.define(op.result, Tile(op.result.type.shape, src.type, gen=lambda b, idx: src, cost=0))


@RULES.register(O.Unsplat)
def lower_unsplat(ctx: LoweringContext, op: O.Unsplat) -> None:
    src = ctx.tile(op.src)
    ctx.define(op.result, src.element(ctx.b, [ir.Constant(I64, 0)] * len(src.shape)))


@RULES.register(O.Broadcast)
def lower_broadcast(ctx: LoweringContext, op: O.Broadcast) -> None:
    src = ctx.get(op.src)
    shape = op.result.type.shape
    if not isinstance(src, Tile):
        ctx.define(op.result, Tile(shape, src.type, gen=lambda b, idx: src, cost=0))
        return
    stored = src.buf is None and src.cost > CHEAP
    if stored:
        # store the small source once rather than recompute it for every element of the broadcast: a row or column
        # of expensive index math (x % M) becomes one load that LLVM hoists out of the inner loop
        src = ctx.materialize(src)
    zero = ir.Constant(I64, 0)
    keep = [s == d for s, d in zip(src.shape, shape)]
    run = _unit_stride_flag(ctx, src) if stored and keep[-1] and shape[-1] > 1 else None

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        v = src.element(b, [i if k else zero for i, k in zip(idx, keep)])
        if run is None:
            return v
        # a stored row that is, at run time, first + j: the affine form lets loads through it vectorize (LLVM
        # unswitches the loop on the invariant flag); otherwise the stored values are used
        flag, first = run
        affine = b.add(first, b.trunc(idx[-1], src.ety))
        return b.select(flag, affine, v)

    ctx.define(op.result, Tile(shape, src.ety, gen=gen, cost=src.cost if src.buf is None else 1))


def _unit_stride_flag(ctx: LoweringContext, src: Tile) -> tuple[ir.Value, ir.Value] | None:
    """For a stored integer row (all dims but the last are 1): (src[j] == src[0] + j for every j, src[0])."""
    if not isinstance(src.ety, ir.IntType) or src.ety.width < 8 or any(d != 1 for d in src.shape[:-1]):
        return None
    b = ctx.b
    lead = [ir.Constant(I64, 0)] * (len(src.shape) - 1)
    first = src.element(b, lead + [ir.Constant(I64, 0)])
    slot = ctx.alloca(ir.IntType(8), 1, "unit_stride")
    b.store(ir.Constant(ir.IntType(8), 1), slot)

    def check(j: ir.Value) -> None:
        bb = ctx.b
        same = bb.icmp_signed("==", src.element(bb, lead + [j]), bb.add(first, bb.trunc(j, src.ety)))
        bb.store(bb.and_(bb.load(slot, typ=ir.IntType(8)), bb.zext(same, ir.IntType(8))), slot)

    ctx.counted_loop(ir.Constant(I64, src.shape[-1]), check, known_nonzero=True)
    flag = b.icmp_unsigned("!=", b.load(slot, typ=ir.IntType(8)), ir.Constant(ir.IntType(8), 0))
    return flag, first


@RULES.register(O.ExpandDims)
def lower_expand_dims(ctx: LoweringContext, op: O.ExpandDims) -> None:
    src = ctx.get(op.src)
    shape = op.result.type.shape
    if not isinstance(src, Tile):
        ctx.define(op.result, Tile(shape, src.type, gen=lambda b, idx: src, cost=0))
        return
    axis = op.axis
    view = Tile(shape, src.ety, buf=src.buf, cost=src.cost)
    if src.buf is None:
        view.gen = lambda b, idx: src.element(b, idx[:axis] + idx[axis + 1 :])
    ctx.define(op.result, view)


@RULES.register(O.Reshape)
def lower_reshape(ctx: LoweringContext, op: O.Reshape) -> None:
    """Row-major element order is unchanged by a reshape, so a buffer is simply viewed at the new shape."""
    src = ctx.tile(op.src)
    if src.buf is None:
        src = ctx.materialize(src)
    ctx.define(op.result, Tile(op.result.type.shape, src.ety, buf=src.buf))


@RULES.register(O.Trans)
def lower_trans(ctx: LoweringContext, op: O.Trans) -> None:
    src = ctx.tile(op.src)
    order = op.order

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        sidx: list[ir.Value] = [ir.Constant(I64, 0)] * len(order)
        for i, o in enumerate(order):
            sidx[o] = idx[i]
        return src.element(b, sidx)

    ctx.define(op.result, Tile(op.result.type.shape, src.ety, gen=gen, cost=src.cost + 1))


@RULES.register(O.Join)
def lower_join(ctx: LoweringContext, op: O.Join) -> None:
    a, c = (ctx.get(v) for v in op.operands)
    shape = op.result.type.shape

    def pick(t, b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        return t.element(b, idx) if isinstance(t, Tile) else t

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        first = b.icmp_unsigned("==", idx[-1], ir.Constant(I64, 0))
        return b.select(first, pick(a, b, idx[:-1]), pick(c, b, idx[:-1]))

    ety = llvm_type(op.result.type)
    ctx.define(op.result, Tile(shape, ety, gen=gen, cost=3))


@RULES.register(O.Split)
def lower_split(ctx: LoweringContext, op: O.Split) -> None:
    src = ctx.tile(op.src)
    for k, res in enumerate(op.results):
        kc = ir.Constant(I64, k)
        if res.type.is_tensor:
            ctx.define(
                res,
                Tile(res.type.shape, src.ety, gen=lambda b, idx, kc=kc: src.element(b, idx + [kc]), cost=src.cost + 1),
            )
        else:
            ctx.define(res, src.element(ctx.b, [kc]))


@RULES.register(O.Cat)
def lower_cat(ctx: LoweringContext, op: O.Cat) -> None:
    """`tt.cat` joins along dim 0; both sources are read at in-range indices, then one is selected."""
    a, c = (ctx.tile(v) for v in op.operands)
    n0 = a.shape[0]
    last_a = ir.Constant(I64, n0 - 1)

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        in_a = b.icmp_unsigned("<", idx[0], ir.Constant(I64, n0))
        ia = b.select(in_a, idx[0], last_a)
        ic = b.select(in_a, ir.Constant(I64, 0), b.sub(idx[0], ir.Constant(I64, n0)))
        return b.select(in_a, a.element(b, [ia] + idx[1:]), c.element(b, [ic] + idx[1:]))

    ctx.define(op.result, Tile(op.result.type.shape, a.ety, gen=gen, cost=a.cost + c.cost + 3))
