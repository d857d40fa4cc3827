"""`tt.dot` of int8 tiles into int32 by groups of k: each step multiplies G adjacent k's of a row of a with the same
G k's of every column of b and adds the G products to one int32 lane, with one x86 instruction per vector.

- G = 4, AVX512-VNNI (`vpdpbusd`: unsigned 8-bit × signed 8-bit quads into int32, 64 multiply-adds per 512-bit
  instruction). Its first operand is unsigned, so a is offset by 128 (`a ^ 0x80` as an unsigned byte) and the
  accumulator starts 128 × (the column sums of b) lower: sum (a+128)·b - 128·sum b = sum a·b.
- G = 2 (`vpmaddwd`, int16 pairs, 32 per 512-bit instruction; LLVM fuses it with the accumulation into `vpdpwssd`
  under VNNI): both operands widened to int16. Where the vector width has no VNNI quad.

The int32 microkernel's `vpmulld` + `vpaddd` did 16 multiply-adds in three uops. The sums are exact: no product or
group sum leaves int32 (|(a+128)·b| <= 255·128, four of them and the correction included), and the accumulation
wraps modulo 2^32 as the element-wise one does, which does not depend on the order of the additions.

b is repacked once per dot into k groups, `packed[p][n] = (b[Gp][n], ..., b[Gp+G-1][n])`, so that one vector load
brings the groups of V columns; a keeps its rows whole (offset or widened), so that a row's group (Gp, ..., Gp+G-1)
is one 32-bit word to broadcast. LLVM forms neither instruction from generic IR (at 512 bits it shuffled with
vpermt2w and kept vpmulld, slower than the int32 kernel), so each scheme is used only where the descriptor lists
its feature.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from .context import LoweringContext, Tile, linear_index
from .register_loop import carried_loop, splat
from .types import I8, I16, I32, I64


@dataclass(frozen=True)
class GroupScheme:
    """One way to multiply-add G k's per int32 lane over V lanes."""

    group: int
    #: element type of the packed operands (int16 pairs, or bytes)
    elem: ir.Type
    feature: str
    intrinsic: str
    #: the intrinsic takes the accumulator (vpdpbusd) rather than returning the group sums (pmaddwd)
    accumulates: bool
    #: a is offset by 128 into unsigned bytes, the accumulator corrected by 128 × b's column sums
    unsigned_a: bool


_SCHEMES = {
    16: (
        GroupScheme(4, I8, "+avx512vnni", "llvm.x86.avx512.vpdpbusd.512", True, True),
        GroupScheme(2, I16, "+avx512bw", "llvm.x86.avx512.pmaddw.d.512", False, False),
    ),
    8: (GroupScheme(2, I16, "+avx2", "llvm.x86.avx2.pmadd.wd", False, False),),
    4: (GroupScheme(2, I16, "+sse2", "llvm.x86.sse2.pmadd.wd", False, False),),
}


def group_plan(
    ctx: LoweringContext, a: Tile, b: Tile, ety: ir.Type, plan: tuple[int, int, int] | None
) -> tuple[tuple[int, int, int], GroupScheme] | None:
    """The int32 register block (MR, NV, V) and the scheme for an int8 a and b into int32: the first of the vector
    width's schemes whose feature the target has and whose group divides k."""
    if plan is None or ety != I32 or a.ety != I8 or b.ety != I8:
        return None
    for scheme in _SCHEMES.get(plan[2], ()):
        if scheme.feature in ctx.target.features and b.shape[-2] % scheme.group == 0:
            return plan, scheme
    return None


def _column_sums(ctx: LoweringContext, b_: Tile, batch: tuple[int, ...]) -> Tile:
    """(.., n) int32: 128 × the sum over k of b's column (vpdpbusd's offset of a, subtracted from the start)."""
    k_, n_ = b_.shape[-2], b_.shape[-1]
    sums = ctx.new_buffer_tile((*batch, n_), I32, "colsum")
    ctx.loop_nest(sums.shape, lambda idx: ctx.store_element(sums, idx, ir.Constant(I32, 0)))

    def add(idx: list[ir.Value]) -> None:
        b = ctx.b
        *bi, k, n = idx
        term = b.shl(b.sext(b_.element(b, [*bi, k, n]), I32), ir.Constant(I32, 7))
        ctx.store_element(sums, [*bi, n], b.add(sums.element(b, [*bi, n]), term))

    ctx.loop_nest((*batch, k_, n_), add)
    return sums


def group_product(
    ctx: LoweringContext,
    a: Tile,
    b_: Tile,
    out: Tile,
    bidx_dims: int,
    plan: tuple[int, int, int],
    scheme: GroupScheme,
) -> None:
    """out += a @ b for int8 tiles `a` (.., m, k) and `b_` (.., k, n) into the int32 buffer tile `out`; `bidx_dims`
    leading batch dimensions (0 or 1)."""
    mr, nv, v = plan
    g = scheme.group
    m_, n_ = out.shape[-2], out.shape[-1]
    k_ = b_.shape[-2]
    batch = out.shape[:bidx_dims]
    c64 = lambda x: ir.Constant(I64, x)

    def prepared(x: ir.Value, is_a: bool) -> ir.Value:
        if scheme.elem == I16:
            return ctx.b.sext(x, I16)
        return ctx.b.xor(x, ir.Constant(I8, 0x80)) if is_a else x

    a_p = ctx.materialize(Tile(a.shape, scheme.elem, gen=lambda b, idx: prepared(a.element(b, idx), True), cost=1))
    packed_shape = (*batch, k_ // g, n_, g)

    def packed_elem(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        *bi, p, n, h = idx
        return prepared(b_.element(b, [*bi, b.add(b.mul(p, c64(g)), h), n]), False)

    packed = ctx.materialize(Tile(packed_shape, scheme.elem, gen=packed_elem, cost=b_.cost + 2))
    sums = _column_sums(ctx, b_, batch) if scheme.unsigned_a else None
    acc_ty = ir.VectorType(I32, v)
    group_ty = ir.VectorType(scheme.elem, g * v)
    fn = ctx.intrinsic(
        scheme.intrinsic, acc_ty, [acc_ty, group_ty, group_ty] if scheme.accumulates else [group_ty, group_ty]
    )

    def block(bidx: list[ir.Value], m0: ir.Value, n0: ir.Value) -> None:
        b = ctx.b
        rows = [b.add(m0, c64(r)) for r in range(mr)]
        cols = [b.add(n0, c64(j * v)) for j in range(nv)]

        def at(t: Tile, idx: list[ir.Value]) -> ir.Value:
            return b.gep(t.buf, [linear_index(b, t.shape, idx)], source_etype=t.ety)

        init = [[b.load(at(out, bidx + [rows[r], cols[j]]), typ=acc_ty, align=4) for j in range(nv)] for r in range(mr)]
        if sums is not None:
            low = [b.load(at(sums, bidx + [cols[j]]), typ=acc_ty, align=4) for j in range(nv)]
            init = [[b.sub(init[r][j], low[j]) for j in range(nv)] for r in range(mr)]

        def step(p: ir.Value, acc: list[list[ir.Value]]) -> list[list[ir.Value]]:
            bv = [b.load(at(packed, bidx + [p, cols[j], c64(0)]), typ=group_ty, align=4) for j in range(nv)]
            k = b.mul(p, c64(g))
            new = []
            for r in range(mr):
                word = b.load(at(a_p, bidx + [rows[r], k]), typ=I32, align=1)
                groups = b.bitcast(splat(b, word, acc_ty), group_ty)
                if scheme.accumulates:
                    new.append([b.call(fn, [acc[r][j], groups, bv[j]]) for j in range(nv)])
                else:
                    new.append([b.add(acc[r][j], b.call(fn, [groups, bv[j]])) for j in range(nv)])
            return new

        new = carried_loop(ctx, init, k_ // g, step, "mkg")
        for r in range(mr):
            for j in range(nv):
                b.store(new[r][j], at(out, bidx + [rows[r], cols[j]]), align=4)

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
