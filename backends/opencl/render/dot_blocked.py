"""The loop-carried `tl.dot` accumulator on a multi-work-item group (tutorial 03's `acc = tl.dot(a, b, acc)` in an
scf.for), held in a *blocked* register layout instead of the canonical one.

In an element-strided layout a work-item holds one column of a 64x64 output (128 work-items): each k step reads 32
values of A and one of B from local memory for 32 fmas, and local-memory reads bound the loop on a GPU. In the blocked
layout work-item `lid` holds a TM x TN block: columns `cg*TN + j` (cg = lid % (N/TN), j < TN, consecutive, read as
float4s of B) and rows `i*(M/TM) + rg` (rg = lid / (N/TN), i < TM: strided, so the A rows two lanes read are a bank
group apart); per 4 k steps it reads TM float4s of A (row-major, rows padded by 4) and TN float4s of B for
4*TM*TN fmas, a third of the reads for 64x64 (TM 8, TN 4). Each element still accumulates k = 0, 1, ... with one fma
each, so results are bit-identical to the canonical path.

The layout never leaves the loop: the accumulator's only reader is the dot, whose result is the loop's next value;
the initial value is written into the layout before the loop and the loop's result is read back into the canonical
layout after it (one exchange through local memory each way, not one per iteration).

With the option `double_buffer`, a loop's staged operands are double-buffered (`double_buffered`): two copies of
the staging area, chosen by the parity of the iteration, so a k step needs one barrier (between writing its copy and
reading it) instead of two (the second had kept a fast work-item from overwriting what a slow one still read):
work-items drift up to one k step apart, so one's global loads overlap another's fmas. Writing copy p at step t is
safe without a barrier: every work-item passed step t-1's barrier, so it finished reading copy p at step t-2, and
copy 1-p is the only one read since. The copies are reserved for the whole loop, so nothing else in the body
(reductions, other dots, layout exchanges: they allocate above them) touches them; a barrier before and after the
loop orders them with the scratch users around it. Where the two copies exceed the device's local memory the
compiler renders again with one. Off by default: on an H100 the 64x64x32 fp32 matmul ran 10 % slower with it
(OpenCLOptions.double_buffer).

Where the canonical layout holds a tile in runs of VEC along its rows (context.vec_of), it already is a blocked layout
with TN = VEC (`canonical_blocks`: 8x4 for 64x64 on 128 work-items): a dot outside a loop computes in it directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Value
from triton_backend_sdk.ir.types import FloatType

from .context import ALIGN, Idx, RenderContext, ScratchArray, Tile, log2

#: k steps per read of A: one float4 of a row
KRUN = 4
#: floats of padding after each staged row of A (a float4, keeping rows 16-byte aligned)
A_PAD = 4
#: at most this many accumulator elements per work-item (more would spill registers on a GPU)
MAX_PER_ITEM = 64


@dataclass(frozen=True)
class BlockedLayout:
    """An M x N tile spread over the group in TM x TN blocks (module docstring)."""

    M: int
    N: int
    TM: int
    TN: int

    @property
    def col_groups(self) -> int:
        return self.N // self.TN

    @property
    def row_stride(self) -> int:
        return self.M // self.TM

    def row_group(self) -> str:
        return f"(lid >> {log2(self.col_groups)})"

    def first_col(self) -> str:
        return f"((lid & {self.col_groups - 1}u) << {log2(self.TN)})"

    def for_each(self, ctx: RenderContext, body: Callable[[Idx, str], None]) -> None:
        """Emit `body(idx, slot)` for every element the work-item holds: its position and its register slot. Each
        element is held by exactly one work-item."""
        i, j = ctx.fresh("bi"), ctx.fresh("bj")
        ctx.emit(ctx.lang.unroll_pragma)
        ctx.emit(f"for (uint {i} = 0u; {i} < {self.TM}u; ++{i}) {{")
        ctx.emit(ctx.lang.unroll_pragma)
        ctx.emit(f"for (uint {j} = 0u; {j} < {self.TN}u; ++{j}) {{")
        with ctx.indent():
            m = f"({i} * {self.row_stride}u + {self.row_group()})"
            n = f"({self.first_col()} + {j})"
            body(Idx.of_dims((self.M, self.N), [m, n]), f"{i} * {self.TN}u + {j}")
        ctx.emit("}")
        ctx.emit("}")


def plan(M: int, N: int, K: int, L: int) -> BlockedLayout | None:
    """The blocked layout of an M x N accumulator over L work-items, or None where the canonical one serves."""
    if L < 2 or (M * N) % L or K % KRUN:
        return None
    per_item = M * N // L
    if per_item < 4 or per_item > MAX_PER_ITEM:
        return None
    tn = 8 if per_item >= 64 else 4
    tm = per_item // tn
    if N % tn or M % tm:
        return None
    return BlockedLayout(M, N, tm, tn)


def blocked_accumulators(ctx: RenderContext, op: O.For) -> dict[int, BlockedLayout]:
    """Carried values of `op` (by position) that are fp32 dot accumulators the blocked layout can hold: the body
    argument's one use is a 2-D fp32 dot in the loop body as its accumulator, and that dot's one use is the yield
    returning it in the same position."""
    out: dict[int, BlockedLayout] = {}
    term = op.body.ops[-1] if op.body.ops else None
    if term is None or not term.terminator:
        return out
    for pos, arg in enumerate(op.body.args[1:]):
        if len(arg.uses) != 1:
            continue
        dot, at = arg.uses[0]
        if not isinstance(dot, O.Dot) or at != 2 or dot.parent is not op.body:
            continue
        if [(u, i) for u, i in dot.result.uses] != [(term, pos)]:
            continue
        if not all(_is_f32_matrix(ctx, v) for v in (dot.a, dot.b, dot.result)):
            continue
        (M, K), N = dot.a.type.shape, dot.b.type.shape[1]
        layout = plan(M, N, K, ctx.L)
        if layout is not None:
            out[pos] = layout
    return out


@dataclass(frozen=True)
class DoubleBuffer:
    """Two copies of a loop-carried dot's staging area (A then B, `size` bytes each, the first at byte `offset`);
    `parity` names the uint that selects the copy, flipped after every dot (module docstring)."""

    offset: int
    size: int
    parity: str

    def shift(self) -> str:
        """The element offset (in floats) of the copy this iteration uses."""
        return f"{self.parity} * {self.size // 4}u"


def staged_bytes(M: int, N: int, K: int) -> tuple[int, int]:
    """Bytes of the staged A (rows padded by A_PAD) and B, each rounded up to the scratch alignment."""
    return _aligned(M * (K + A_PAD) * 4), _aligned(K * N * 4)


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@contextmanager
def double_buffered(ctx: RenderContext, op: O.For, blocked: dict[int, BlockedLayout]) -> Iterator[None]:
    """Around the rendering of loop `op`: reserve a double buffer for the dot of each blocked accumulator (positions
    `blocked`), with a barrier before the loop and after it; nothing where the context renders single buffers."""
    if not blocked or not ctx.double_buffer:
        yield
        return
    base = ctx.scratch_top
    ctx.barrier()
    dots = [arg.uses[0][0] for pos, arg in enumerate(op.body.args[1:]) if pos in blocked]
    for dot in dots:
        (M, K), N = dot.a.type.shape, dot.b.type.shape[1]
        size = sum(staged_bytes(M, N, K))
        parity = ctx.fresh("db")
        ctx.emit(f"uint {parity} = 0u;")
        ctx.dot_buffers[id(dot)] = DoubleBuffer(ctx.alloc(2 * size), size, parity)
    ctx.double_buffered = True
    yield
    for dot in dots:
        del ctx.dot_buffers[id(dot)]
    ctx.barrier()
    ctx.scratch_top = base


def _is_f32_matrix(ctx: RenderContext, v: Value) -> bool:
    t = v.type
    return len(t.shape) == 2 and isinstance(t.element, FloatType) and ctx.ctype(v) == "float"


def declare_blocked(ctx: RenderContext, v: Value, layout: BlockedLayout, init: Any) -> Tile:
    """A register array for `v` in `layout`, holding `init` (any rendered tile of the same shape)."""
    name = ctx.name_for(v, "t")
    ctx.emit(f"float {name}[{layout.TM * layout.TN}];")
    out = Tile((layout.M, layout.N), "float", reg=name, layout=layout)
    with ctx.loop_body() as (inner, base):
        layout.for_each(ctx, lambda idx, slot: ctx.emit(f"{name}[{slot}] = {ctx.element(init, idx)};"))
    ctx.emit_lines(inner)
    ctx.scratch_top = base
    return out


def canonical_blocks(ctx: RenderContext, M: int, N: int, K: int) -> BlockedLayout | None:
    """The canonical layout of an M x N tile held in runs of VEC (context.vec_of) as the blocked layout it is, where
    it is one: work-item `lid`'s runs g are row g*(VEC*L/N) + lid/(N/VEC), columns VEC*(lid % (N/VEC)) + j — TM x VEC
    blocks, slot g*VEC + j — wherever a row is at most VEC*L wide. A dot whose output is held so computes in blocks
    with no change of layout."""
    v = ctx.vec_of((M, N))
    if v == 1 or N > v * ctx.L or (v * ctx.L) % N or K % KRUN:
        return None
    return BlockedLayout(M, N, M * N // (v * ctx.L), v)


def render_blocked_dot(ctx: RenderContext, op: O.Dot, acc: Tile) -> None:
    """acc += a @ b in place (the caller checked that nothing else reads the accumulator)."""
    blocked_product(ctx, op, acc.reg, acc.layout)
    ctx.values[op.result] = acc


def blocked_product(ctx: RenderContext, op: O.Dot, reg: str, layout: BlockedLayout) -> None:
    """reg += a @ b for the fp32 register array `reg` holding the output in `layout`: both operands staged in local
    memory (this iteration's copy of a double buffer, where the loop reserved one), then per KRUN k steps TM float4s
    of A and TN/4 of B per row of B for 4*TM*TN fmas."""
    (M, K), N = op.a.type.shape, op.b.type.shape[1]
    base = ctx.scratch_top
    lda = K + A_PAD
    buf: DoubleBuffer | None = ctx.dot_buffers.get(id(op))
    if buf is None:
        a_off, b_off, shift = ctx.alloc(M * lda * 4), ctx.alloc(K * N * 4), ""
    else:
        a_off, b_off, shift = buf.offset, buf.offset + staged_bytes(M, N, K)[0], buf.shift()
    A = ctx.local_array("float", a_off, shift)
    a = ctx.get(op.a)
    if buf is None:
        ctx.barrier()
    ctx.tile_loop(
        (M, K),
        lambda idx: ctx.emit(f"{A[f'{idx.dim(0)} * {lda}u + {idx.dim(1)}']} = {ctx.element(a, idx)};"),
        owner=True,
    )
    B = ctx.write_scratch(ctx.get(op.b), (K, N), "float", b_off, shift)
    ctx.barrier()
    rg, c0, k = ctx.fresh("rg"), ctx.fresh("c0"), ctx.fresh("k")
    ctx.emit(f"const uint {rg} = {layout.row_group()}, {c0} = {layout.first_col()};")
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {k} = 0u; {k} < {K}u; {k} += {KRUN}u) {{")
    with ctx.indent():
        xs = [
            scratch_float4(ctx, A, f"({i * layout.row_stride}u + {rg}) * {lda}u + {k}", "ak") for i in range(layout.TM)
        ]
        for kk in range(KRUN):
            ys = [
                scratch_float4(ctx, B, f"({k} + {kk}u) * {N}u + {c0} + {4 * q}u", "bk") for q in range(layout.TN // 4)
            ]
            for i, x in enumerate(xs):
                for j in range(layout.TN):
                    xe, ye = ctx.lang.vector_elem(x, kk), ctx.lang.vector_elem(ys[j // 4], j % 4)
                    slot = f"{reg}[{i * layout.TN + j}]"
                    ctx.emit(f"{slot} = fma({xe}, {ye}, {slot});")
    ctx.emit("}")
    if buf is not None:
        ctx.emit(f"{buf.parity} ^= 1u;")
    ctx.scratch_top = base


def scratch_float4(ctx: RenderContext, arr: ScratchArray, at: str, hint: str) -> str:
    """Declare a float4 named from `hint` holding arr[at..at+3] (16-byte aligned); returns its name."""
    name, vt = ctx.fresh(hint), ctx.lang.vector_type("float", 4)
    ctx.emit(f"const {vt} {name} = *((const {ctx.scratch_qual}{vt} *)({arr.address(at)}));")
    return name
