"""Explicitly vectorized innermost-axis reductions for the common combine functions (sum, max, min, ...).

LLVM fully unrolls a short per-lane loop before its loop vectorizer sees it, and its SLP vectorizer leaves a chain of
`maxnum`s scalar, so `tl.max`/`tl.sum` over a row would run one element per instruction. When the combine region is a
single elementwise op of its two arguments and the row is in memory, the row is instead folded with A independent
V-wide vector accumulators (V from the target's vector width), which are then folded lane by lane with the region's
own scalar code. Like the GPU's tree reduction this reassociates, which Triton's reduce contract allows.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from triton_backend_sdk.analysis.tile_model import reduction_plan
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Block
from triton_backend_sdk.ir.dialects.tt import combine_body

from .context import LoweringContext, Tile, linear_index
from .elementwise import FCMP
from .types import F32, F64, I1, I64, bit_width, is_float_type

VecOp = Callable[[LoweringContext, ir.Value, ir.Value], ir.Value]


def _intrinsic(name: str) -> VecOp:
    def f(ctx: LoweringContext, x: ir.Value, y: ir.Value) -> ir.Value:
        ty = x.type
        elem = ty.element
        suffix = {F32: "f32", F64: "f64"}.get(elem) or f"i{elem.width}"
        fn = ctx.intrinsic(f"{name}.v{ty.count}{suffix}", ty, [ty, ty])
        return ctx.b.call(fn, [x, y])

    return f


_VECTOR_OPS: dict[type, VecOp] = {
    O.AddF: lambda ctx, x, y: ctx.b.fadd(x, y),
    O.MulF: lambda ctx, x, y: ctx.b.fmul(x, y),
    O.MaxNumF: _intrinsic("llvm.maxnum"),
    O.MinNumF: _intrinsic("llvm.minnum"),
    O.MaximumF: _intrinsic("llvm.maximum"),
    O.MinimumF: _intrinsic("llvm.minimum"),
    O.AddI: lambda ctx, x, y: ctx.b.add(x, y),
    O.MulI: lambda ctx, x, y: ctx.b.mul(x, y),
    O.MaxSI: _intrinsic("llvm.smax"),
    O.MinSI: _intrinsic("llvm.smin"),
    O.MaxUI: _intrinsic("llvm.umax"),
    O.MinUI: _intrinsic("llvm.umin"),
    O.AndI: lambda ctx, x, y: ctx.b.and_(x, y),
    O.OrI: lambda ctx, x, y: ctx.b.or_(x, y),
    O.XOrI: lambda ctx, x, y: ctx.b.xor(x, y),
}


def _fcmp(ctx: LoweringContext, op: O.CmpF, x: ir.Value, y: ir.Value) -> ir.Value:
    ordered, pred = FCMP[op.predicate]
    return (ctx.b.fcmp_ordered if ordered else ctx.b.fcmp_unordered)(pred, x, y)


def _icmp(ctx: LoweringContext, op: O.CmpI, x: ir.Value, y: ir.Value) -> ir.Value:
    p = op.predicate
    return (ctx.b.icmp_signed if p.signed else ctx.b.icmp_unsigned)(p.relation, x, y)


def _ignoring_op(f: VecOp) -> Callable[..., ir.Value]:
    return lambda ctx, op, x, y: f(ctx, x, y)


#: ops a combine region may be built from, beyond the single-op forms: Inductor's NaN-propagating max/min
#: (`select(a > b | a != a, a, b)`) and the like, evaluated lane-wise on vectors exactly as written
_REGION_OPS: dict[type, Callable[..., ir.Value]] = {
    O.CmpF: _fcmp,
    O.CmpI: _icmp,
    O.Select: lambda ctx, op, c, x, y: ctx.b.select(c, x, y),
    **{cls: _ignoring_op(f) for cls, f in _VECTOR_OPS.items()},
    O.SubF: lambda ctx, op, x, y: ctx.b.fsub(x, y),
    O.SubI: lambda ctx, op, x, y: ctx.b.sub(x, y),
}


#: the most ops of a combine region evaluated on vectors
MAX_REGION_OPS = 8


def simple_combine(block: Block) -> VecOp | None:
    """The vector form of a combine region of one result built only from elementwise ops on its two arguments
    (`return op(a, b)` in either order, or a small expression such as a NaN-propagating max), else None."""
    body = combine_body(block, MAX_REGION_OPS)
    if body is None:
        return None
    ret = block.ops[-1]
    if len(body) == 1:
        (op,) = body
        fn = _VECTOR_OPS.get(type(op))
        if fn is None or ret.values[0] is not op.result:
            return None
        return fn if {id(v) for v in op.operands} == {id(a) for a in block.args} else None
    for op in body:
        if type(op) not in _REGION_OPS:
            return None
        if isinstance(op, O.CmpF) and op.predicate not in FCMP:
            return None

    def fn(ctx: LoweringContext, x: ir.Value, y: ir.Value) -> ir.Value:
        env = {id(block.args[0]): x, id(block.args[1]): y}
        for op in body:
            env[id(op.result)] = _REGION_OPS[type(op)](ctx, op, *[env[id(v)] for v in op.operands])
        return env[id(ret.operands[0])]

    return fn


def plan(ctx: LoweringContext, src: Tile, block: Block) -> tuple[VecOp, int, int] | None:
    """(vector op, V, A) if this row reduction can be vectorized, else None."""
    fn = simple_combine(block)
    if fn is None or src.buf is None or src.ety == I1:
        return None
    if not (is_float_type(src.ety) and src.ety in (F32, F64)) and not isinstance(src.ety, ir.IntType):
        return None
    vp = reduction_plan(ctx.vector_bits, bit_width(src.ety), src.shape[-1])
    return None if vp is None else (fn, *vp)


def reduce_row(ctx: LoweringContext, src: Tile, idx: list[ir.Value], fn: VecOp, v: int, a: int, lanes: Tile) -> None:
    """Fold row `idx` of `src` into `lanes` (a [V] buffer of the element type): A accumulators of V lanes each."""
    b = ctx.b
    n = src.shape[-1]
    vty = ir.VectorType(src.ety, v)
    c64 = lambda x: ir.Constant(I64, x)
    row = b.gep(src.buf, [linear_index(b, src.shape, idx + [c64(0)])], source_etype=src.ety)

    def load(off: ir.Value) -> ir.Value:
        return ctx.b.load(ctx.b.gep(row, [off], source_etype=src.ety), typ=vty, align=4)

    init = [load(c64(q * v)) for q in range(a)]
    steps = n // (v * a)
    if steps > 1:
        pre = b.block
        loop = b.append_basic_block("vred")
        done = b.append_basic_block("vred.done")
        b.branch(loop)
        b.position_at_end(loop)
        k = b.phi(I64)
        k.add_incoming(c64(1), pre)
        accs = []
        for q in range(a):
            phi = b.phi(vty)
            phi.add_incoming(init[q], pre)
            accs.append(phi)
        base = b.mul(k, c64(v * a))
        new = [fn(ctx, accs[q], load(b.add(base, c64(q * v)))) for q in range(a)]
        for q in range(a):
            accs[q].add_incoming(new[q], loop)
        nxt = b.add(k, c64(1))
        k.add_incoming(nxt, loop)
        b.cbranch(b.icmp_signed("<", nxt, c64(steps)), loop, done)
        b.position_at_end(done)
        init = new
    while len(init) > 1:
        init = [fn(ctx, init[i], init[i + len(init) // 2]) for i in range(len(init) // 2)]
    b.store(init[0], b.gep(lanes.buf, [c64(0)], source_etype=src.ety), align=4)


def axis_plan(ctx: LoweringContext, src: Tile, axis: int, block: Block) -> tuple[VecOp, int] | None:
    """(vector op, V) if a reduction over the non-innermost `axis` can fold whole V-wide slices of the contiguous
    elements after it (the inner block), else None."""
    fn = simple_combine(block)
    if fn is None or src.buf is None or src.ety == I1:
        return None
    if not (is_float_type(src.ety) and src.ety in (F32, F64)) and not isinstance(src.ety, ir.IntType):
        return None
    inner = 1
    for d in src.shape[axis + 1 :]:
        inner *= d
    v = ctx.vector_bits // bit_width(src.ety)
    while v > 1 and inner % v:
        v //= 2
    return None if v < 2 else (fn, v)


def reduce_axis(ctx: LoweringContext, src: Tile, axis: int, fn: VecOp, v: int, out: Tile) -> None:
    """out[o, i] = fold over k of src[o, k, i] (o the dims before `axis`, i the contiguous inner block), V lanes of
    the inner block at a time with the accumulator in a register: lane-wise work, no horizontal step."""
    b = ctx.b
    shape = src.shape
    n = shape[axis]
    outer = inner = 1
    for d in shape[:axis]:
        outer *= d
    for d in shape[axis + 1 :]:
        inner *= d
    vty = ir.VectorType(src.ety, v)
    c64 = lambda x: ir.Constant(I64, x)

    def vec(buf: ir.Value, off: ir.Value) -> ir.Value:
        return b.gep(buf, [off], source_etype=src.ety)

    def chunk(flat: ir.Value) -> None:
        o = b.udiv(flat, c64(inner // v))
        i = b.mul(b.urem(flat, c64(inner // v)), c64(v))
        base = b.add(b.mul(o, c64(n * inner)), i)
        acc: ir.Value = b.load(vec(src.buf, base), typ=vty, align=4)
        if n > 1:
            pre = b.block
            loop = b.append_basic_block("vaxis")
            done = b.append_basic_block("vaxis.done")
            b.branch(loop)
            b.position_at_end(loop)
            k = b.phi(I64)
            k.add_incoming(c64(1), pre)
            phi = b.phi(vty)
            phi.add_incoming(acc, pre)
            new = fn(ctx, phi, b.load(vec(src.buf, b.add(base, b.mul(k, c64(inner)))), typ=vty, align=4))
            phi.add_incoming(new, loop)
            nxt = b.add(k, c64(1))
            k.add_incoming(nxt, loop)
            b.cbranch(b.icmp_signed("<", nxt, c64(n)), loop, done)
            b.position_at_end(done)
            acc = new
        b.store(acc, vec(out.buf, b.add(b.mul(o, c64(inner)), i)), align=4)

    ctx.counted_loop(c64(outer * inner // v), chunk, known_nonzero=True)
