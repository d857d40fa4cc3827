"""`tt.dot` of int8 tiles into int32 by pairs of k: each step multiplies two adjacent k's of a row of a with the
same two k's of every column of b and adds both products to one int32 lane.

Written with x86's multiply-add of int16 pairs (`vpmaddwd`; with AVX512-VNNI or AVX-VNNI LLVM fuses it with the
accumulation into `vpdpwssd`): 32 multiply-adds per 512-bit
instruction where the int32 microkernel's `vpmulld` + `vpaddd` did 16 in three uops. The sums are exact: two int8
products fit in 16 bits each and their sum in 32; the int32 accumulation wraps as the element-wise one does, and
integer addition modulo 2^32 does not depend on the order.

b is repacked once per dot into k pairs: `packed[p][n] = (b[2p][n], b[2p+1][n])` as two int16, so that one vector
load brings the pairs of V columns; a is widened to int16 with its rows kept whole, so that a row's pair (2p, 2p+1)
is one 32-bit word to broadcast.
"""

from __future__ import annotations

from llvmlite import ir

from .context import LoweringContext, Tile, linear_index
from .types import I8, I16, I32, I64

#: int32 lanes -> (the x86 feature, the intrinsic) of a multiply-add of int16 pairs over that many lanes. LLVM does
#: not form `vpmaddwd` from the generic even/odd pattern at 512 bits (it shuffled with vpermt2w and kept vpmulld:
#: slower than the int32 kernel), so the pair scheme is used only where the target has the instruction.
_PMADDWD = {
    16: ("+avx512bw", "llvm.x86.avx512.pmaddw.d.512"),
    8: ("+avx2", "llvm.x86.avx2.pmadd.wd"),
    4: ("+sse2", "llvm.x86.sse2.pmadd.wd"),
}


def pair_plan(
    ctx: LoweringContext, a: Tile, b: Tile, ety: ir.Type, plan: tuple[int, int, int] | None
) -> tuple[int, int, int] | None:
    """The int32 register block (MR, NV, V) where the pair scheme applies: int8 a and b into int32 with an even k,
    on a target with a pair multiply-add of V lanes."""
    if plan is None or ety != I32 or a.ety != I8 or b.ety != I8 or b.shape[-2] % 2:
        return None
    feature, _ = _PMADDWD.get(plan[2], ("", ""))
    return plan if feature and feature in ctx.target.features else None


def _pair_products(ctx: LoweringContext, x: ir.Value, y: ir.Value, lanes: int) -> ir.Value:
    """`<lanes x i32>`: x[2i]*y[2i] + x[2i+1]*y[2i+1] of two `<2·lanes x i16>` (pmaddwd)."""
    half = ir.VectorType(I16, 2 * lanes)
    fn = ctx.intrinsic(_PMADDWD[lanes][1], ir.VectorType(I32, lanes), [half, half])
    return ctx.b.call(fn, [x, y])


def pair_product(
    ctx: LoweringContext, a: Tile, b_: Tile, out: Tile, bidx_dims: int, plan: tuple[int, int, int]
) -> None:
    """out += a @ b for int8 tiles `a` (.., m, k) and `b_` (.., k, n) into the int32 buffer tile `out`; `bidx_dims`
    leading batch dimensions (0 or 1)."""
    mr, nv, v = plan
    m_, n_ = out.shape[-2], out.shape[-1]
    k_ = b_.shape[-2]
    batch = out.shape[:bidx_dims]
    c64 = lambda x: ir.Constant(I64, x)

    def widen(x: ir.Value) -> ir.Value:
        return ctx.b.sext(x, I16)

    a16 = ctx.materialize(Tile(a.shape, I16, gen=lambda b, idx: widen(a.element(b, idx)), cost=a.cost + 1))
    packed_shape = (*batch, k_ // 2, n_, 2)

    def packed_elem(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        *bi, p, n, h = idx
        k = b.add(b.mul(p, c64(2)), h)
        return widen(b_.element(b, [*bi, k, n]))

    packed = ctx.materialize(Tile(packed_shape, I16, gen=packed_elem, cost=b_.cost + 2))
    acc_ty = ir.VectorType(I32, v)
    pair_ty = ir.VectorType(I16, 2 * v)

    def block(bidx: list[ir.Value], m0: ir.Value, n0: ir.Value) -> None:
        b = ctx.b
        rows = [b.add(m0, c64(r)) for r in range(mr)]
        cols = [b.add(n0, c64(j * v)) for j in range(nv)]

        def out_ptr(r: int, j: int) -> ir.Value:
            return b.gep(out.buf, [linear_index(b, out.shape, bidx + [rows[r], cols[j]])], source_etype=I32)

        init = [[b.load(out_ptr(r, j), typ=acc_ty, align=4) for j in range(nv)] for r in range(mr)]
        pre = b.block
        loop = b.append_basic_block("mkp.k")
        done = b.append_basic_block("mkp.done")
        b.branch(loop)
        b.position_at_end(loop)
        p = b.phi(I64, name="p")
        p.add_incoming(c64(0), pre)
        acc = [[b.phi(acc_ty) for _ in range(nv)] for _ in range(mr)]
        for r in range(mr):
            for j in range(nv):
                acc[r][j].add_incoming(init[r][j], pre)
        bv = []
        for j in range(nv):
            at = linear_index(b, packed_shape, bidx + [p, cols[j], c64(0)])
            bv.append(b.load(b.gep(packed.buf, [at], source_etype=I16), typ=pair_ty, align=4))
        k = b.mul(p, c64(2))
        new = []
        for r in range(mr):
            at = linear_index(b, a16.shape, bidx + [rows[r], k])
            word = b.load(b.gep(a16.buf, [at], source_etype=I16), typ=I32, align=2)
            splat = b.shuffle_vector(
                b.insert_element(ir.Constant(acc_ty, None), word, ir.Constant(I32, 0)),
                ir.Constant(acc_ty, None),
                ir.Constant(ir.VectorType(I32, v), [0] * v),
            )
            pairs = b.bitcast(splat, pair_ty)
            new.append([b.add(acc[r][j], _pair_products(ctx, pairs, bv[j], v)) for j in range(nv)])
        p_next = b.add(p, c64(1))
        for r in range(mr):
            for j in range(nv):
                acc[r][j].add_incoming(new[r][j], loop)
        p.add_incoming(p_next, loop)
        b.cbranch(b.icmp_signed("<", p_next, c64(k_ // 2)), loop, done)
        b.position_at_end(done)
        for r in range(mr):
            for j in range(nv):
                b.store(new[r][j], out_ptr(r, j), align=4)

    def per_batch(bidx: list[ir.Value]) -> None:
        def m_step(mi: ir.Value) -> None:
            m0 = ctx.b.mul(mi, c64(mr))
            ctx.counted_loop(
                c64(n_ // (v * nv)), lambda ni: block(bidx, m0, ctx.b.mul(ni, c64(v * nv))), known_nonzero=True
            )

        ctx.counted_loop(c64(m_ // mr), m_step, known_nonzero=True)

    if batch:
        ctx.counted_loop(c64(batch[0]), lambda i: per_batch([i]), known_nonzero=True)
    else:
        per_batch([])
