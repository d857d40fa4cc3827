"""A full reduction's per-work-item partials combined by warp shuffles, where the device has them.

NVIDIA's OpenCL 1.2 has no subgroup functions, but its compiler takes inline PTX (`shfl.sync.bfly.b32`, the
descriptor feature `language.WARP_SHFL_PTX`): within a warp the partials combine by butterfly exchanges, across warps
through one local-memory array of one value per warp (one barrier after the writes, one before them so that the
array is free). The local-memory path (reduce_scan.py) needs three barriers and L reads and writes.

Every value travels as 32-bit words: 64-bit values as two halves, 8/16-bit integers and booleans widened to 32
bits (fp16/bf16 are already `float` in registers); a multi-operand combine (argmin/argmax) shuffles each operand.

Combine order: a fixed binary tree over the work-items' partials. At the step of mask m every work-item combines
`(lower, upper)` = the partials of the two halves whose lanes differ in bit m, the lower half's always first, so
both work-items of a pair compute the same combine of the same operands and every work-item ends with the same bits.
Steps go from the widest mask down: within a warp lanes (k, k+16), then (k, k+8), ...; across warps the W warp
totals, read so that each group of W lanes holds them in order, by the same steps from W/2 down. The local-memory
path combines sequentially instead (S ~ sqrt L chains of L/S partials, then the S results), so floating-point sums
may round differently; the combine function is the kernel's own in both, applied to operands in index order, so NaN
and signed-zero behaviour is the combine's.
"""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O

from . import ctypes as CT
from .context import RenderContext, log2
from .language import WarpShuffle

_B32 = "tb_shfl_bfly_b32"
_B64 = "tb_shfl_bfly_b64"
#: C types shuffled as one 32-bit word by value conversion (sign-extended or zero-extended, then truncated back)
_WIDENED = frozenset({"bool", "char", "uchar", "short", "ushort", "uint"})
#: C types shuffled as the bits of one or two 32-bit words
_BITS = {"int": 32, "float": 32, "long": 64, "ulong": 64, "double": 64}


def shufflable(ctype: str) -> bool:
    return ctype in _WIDENED or ctype in _BITS


def _b32(ctx: RenderContext, shuffle: WarpShuffle) -> str:
    stmt = shuffle.bfly.format(out="r", x="x", mask="m")
    return ctx.define_helper(_B32, f"inline uint {_B32}(uint x, uint m) {{\n  uint r;\n  {stmt}\n  return r;\n}}")


def _b64(ctx: RenderContext, shuffle: WarpShuffle) -> str:
    b32 = _b32(ctx, shuffle)
    lang = ctx.lang
    v2 = lang.vector_type("uint", 2)
    halves = " ".join(f"{lang.vector_elem('v', k)} = {b32}({lang.vector_elem('v', k)}, m);" for k in (0, 1))
    text = (
        f"inline ulong {_B64}(ulong x, uint m) {{\n  {v2} v = {lang.bitcast(v2, 'x')};\n  {halves}\n"
        f"  return {lang.bitcast('ulong', 'v')};\n}}"
    )
    return ctx.define_helper(_B64, text)


def _shuffled(ctx: RenderContext, shuffle: WarpShuffle, ctype: str, x: str, mask: str) -> str:
    """`x` (of `ctype`) of the work-item whose lane is this one's xor `mask`."""
    if ctype in _WIDENED:
        return f"(({ctype}){_b32(ctx, shuffle)}((uint){x}, {mask}))"
    if _BITS[ctype] == 32:
        return ctx.lang.bitcast(ctype, f"{_b32(ctx, shuffle)}({ctx.lang.bitcast('uint', x)}, {mask})")
    return ctx.lang.bitcast(ctype, f"{_b64(ctx, shuffle)}({ctx.lang.bitcast('ulong', x)}, {mask})")


def _butterfly(
    ctx: RenderContext, op: O.Reduce, shuffle: WarpShuffle, ctypes: list[str], accs: list[str], n: int
) -> None:
    """Combine `accs` over aligned groups of `n` lanes (a power of two up to the warp), widest mask first."""
    from .reduce_scan import combine

    m = n // 2
    while m >= 1:
        ctx.emit("{")
        with ctx.indent():
            up = ctx.fresh("up")
            ctx.emit(f"const bool {up} = (lid & {m}u) != 0u;")
            lo, hi = [], []
            for a, ct in zip(accs, ctypes):
                o, lo_, hi_ = ctx.fresh("o"), ctx.fresh("lo"), ctx.fresh("hi")
                ctx.emit(f"const {ct} {o} = {_shuffled(ctx, shuffle, ct, a, f'{m}u')};")
                ctx.emit(f"const {ct} {lo_} = {up} ? {o} : {a}, {hi_} = {up} ? {a} : {o};")
                lo.append(lo_)
                hi.append(hi_)
            combine(ctx, op, lo, hi, accs)
        ctx.emit("}")
        m //= 2


def warp_combine_partials(ctx: RenderContext, op: O.Reduce, ctypes: list[str], accs: list[str]) -> bool:
    """Combine the L work-items' partials `accs` so that every work-item holds the total, by shuffles; False (and
    nothing emitted) where the device has no warp shuffle, the group is smaller than a warp, or an operand's type
    cannot be shuffled."""
    shuffle = ctx.lang.warp_shuffle(ctx.features)
    L = ctx.L
    if shuffle is None or L < shuffle.width or not all(shufflable(ct) for ct in ctypes):
        return False
    W = shuffle.width
    _butterfly(ctx, op, shuffle, ctypes, accs, W)
    warps = L // W
    if warps == 1:
        return True
    arrays = [ctx.local_array(ct, ctx.alloc(warps * CT.size_of(ct))) for ct in ctypes]
    ctx.barrier()
    ctx.emit(
        f"if ((lid & {W - 1}u) == 0u) {{ "
        + " ".join(f"{arr[f'lid >> {log2(W)}']} = {a};" for arr, a in zip(arrays, accs))
        + " }"
    )
    ctx.barrier()
    for arr, a in zip(arrays, accs):
        ctx.emit(f"{a} = {arr[f'lid & {warps - 1}u']};")
    _butterfly(ctx, op, shuffle, ctypes, accs, warps)
    return True


__all__ = ["shufflable", "warp_combine_partials"]
