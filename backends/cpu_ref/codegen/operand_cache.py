"""Dot operand tiles kept between the programs of one launcher chunk (`sdk/analysis/operand_reuse.py` says which).

The launcher's entry runs a chunk of consecutive programs on one thread. A kernel with reusable loads takes one more
hidden parameter: a block the entry allocates per chunk (aligned_alloc, markers cleared, freed at the end). Each
reusable load owns a control line and `slots` slots of it, one per iteration of its loop: a slot holds a marker, the
key (the load's scalar leaves as 64-bit words) and the tile as the load's copy would lay it out. At iteration i a
program compares its key with slot i's: equal, the tile is that slot's data and nothing is read from the operand's
memory; otherwise it loads the tile into the slot and writes the key. Iterations past the slots, or a failed
allocation, load into a stack buffer as before.

Whether a program uses the slots at all is decided at its first iteration (the control line's `mode`): it does where
slot 0 is empty or holds its key, or where the previous program found its own key there. Programs in an order that never repeats a tile
(GROUP_M=1: each program a new column block of B) stop writing slots after the second program: filling slots no
later program reads cost 2.5-11 % against the stack buffer, which stays in L1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir
from triton_backend_sdk.analysis.operand_reuse import reusable_dot_operand
from triton_backend_sdk.analysis.tile_model import CACHE_LINE, OPERAND_CACHE_BYTES
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Value

from .context import LoweringContext, Tile
from .types import I8, I64, PTR, bit_width, buffer_type, is_float_type, llvm_type

_WORD = 8
#: bytes before an operand's slots: its `mode` word (this program uses the slots) and `last` word (the previous
#: program's first iteration matched)
_CONTROL = 64
#: slots of one operand at most: loops longer than this read the rest of their tiles from memory (the entry clears
#: every slot's marker per chunk)
MAX_SLOTS = 256


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class CachedOperand:
    """Where one reusable load's slots lie in the chunk's block."""

    leaves: tuple[Value, ...]
    #: bytes from the block's start to the operand's control line (its first slot follows it)
    offset: int
    slots: int
    #: marker and key words, rounded up to a cache line
    header_bytes: int
    slot_bytes: int


@dataclass(frozen=True)
class OperandCachePlan:
    operands: dict[O.Load, CachedOperand]
    #: bytes the entry allocates per chunk
    total: int


def plan(kernel: O.Func) -> OperandCachePlan | None:
    """The slots of `kernel`'s reusable dot operands within OPERAND_CACHE_BYTES (shared evenly), or None where
    there are none or no operand gets two slots."""
    found = []
    for op in kernel.walk():
        if isinstance(op, O.Load):
            leaves = reusable_dot_operand(op, kernel)
            if leaves is not None:
                found.append((op, tuple(leaves)))
    operands: dict[O.Load, CachedOperand] = {}
    offset = 0
    for load, leaves in found:
        res = load.result.type
        n = 1
        for d in res.shape:
            n *= d
        data = _round_up(n * bit_width(buffer_type(llvm_type(res))) // 8, CACHE_LINE)
        header = _round_up((1 + len(leaves)) * _WORD, CACHE_LINE)
        slots = min(MAX_SLOTS, (OPERAND_CACHE_BYTES // len(found) - _CONTROL) // (header + data))
        if slots >= 2:
            operands[load] = CachedOperand(leaves, offset, slots, header, header + data)
            offset += _CONTROL + slots * (header + data)
    return OperandCachePlan(operands, offset) if operands else None


def _word(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """A scalar's bits as an i64 (equal words for equal values)."""
    if v.type == PTR:
        return b.ptrtoint(v, I64)
    if is_float_type(v.type):
        v = b.bitcast(v, ir.IntType(bit_width(v.type)))
    return v if v.type == I64 else b.zext(v, I64)


def _slot(b: ir.IRBuilder, block: ir.Value, spec: CachedOperand, i: ir.Value) -> ir.Value:
    at = b.add(ir.Constant(I64, spec.offset + _CONTROL), b.mul(i, ir.Constant(I64, spec.slot_bytes)))
    return b.gep(block, [at], source_etype=I8)


def _control(b: ir.IRBuilder, block: ir.Value, spec: CachedOperand, word: int) -> ir.Value:
    return b.gep(block, [ir.Constant(I64, spec.offset + word * _WORD)], source_etype=I8)


def clear_markers(b: ir.IRBuilder, block: ir.Value, cache_plan: OperandCachePlan) -> None:
    """Mark every slot empty and no program's first iteration matched (the entry, after allocating `block`)."""
    for spec in cache_plan.operands.values():
        b.store(ir.Constant(I64, 0), _control(b, block, spec, 0))
        b.store(ir.Constant(I64, 0), _control(b, block, spec, 1))
        pre = b.block
        loop = b.append_basic_block("clear")
        done = b.append_basic_block("clear.end")
        b.branch(loop)
        b.position_at_end(loop)
        i = b.phi(I64)
        i.add_incoming(ir.Constant(I64, 0), pre)
        b.store(ir.Constant(I64, 0), _slot(b, block, spec, i))
        nxt = b.add(i, ir.Constant(I64, 1))
        i.add_incoming(nxt, loop)
        b.cbranch(b.icmp_unsigned("<", nxt, ir.Constant(I64, spec.slots)), loop, done)
        b.position_at_end(done)


def _iteration(ctx: LoweringContext, load: O.Load) -> ir.Value:
    """The number of the enclosing scf.for's current iteration, as i64."""
    b = ctx.b
    block = load.parent
    loop = block.parent.parent
    widen = b.zext if loop.unsigned_cmp else b.sext

    def i64(v: ir.Value) -> ir.Value:
        return v if v.type == I64 else widen(v, I64)

    iv, lb, step = i64(ctx.scalar(block.args[0])), i64(ctx.scalar(loop.lower)), i64(ctx.scalar(loop.step))
    zero = ir.Constant(I64, 0)
    step = b.select(b.icmp_signed("==", step, zero), ir.Constant(I64, 1), step)
    return b.udiv(b.sub(iv, lb), step) if loop.unsigned_cmp else b.sdiv(b.sub(iv, lb), step)


def _key_word(b: ir.IRBuilder, base: ir.Value, i: int) -> ir.Value:
    """Key word i of the slot at `base` (after its marker)."""
    return b.gep(base, [ir.Constant(I64, (1 + i) * _WORD)], source_etype=I8)


def _matches(b: ir.IRBuilder, base: ir.Value, words: list[ir.Value]) -> ir.Value:
    """Whether the slot at `base` is filled and holds key `words`."""
    hit = b.icmp_unsigned("==", b.load(base, typ=I64), ir.Constant(I64, 1))
    for i, w in enumerate(words):
        hit = b.and_(hit, b.icmp_unsigned("==", b.load(_key_word(b, base, i), typ=I64), w))
    return hit


def _decide(ctx: LoweringContext, block: ir.Value, spec: CachedOperand, words: list[ir.Value]) -> None:
    """At a program's first iteration: its `mode` (use the slots: slot 0 empty or holding its key, or the previous
    program found its own key there) and the `last` word (whether this one did) for the next program."""
    b = ctx.b
    base = _slot(b, block, spec, ir.Constant(I64, 0))
    empty = b.icmp_unsigned("!=", b.load(base, typ=I64), ir.Constant(I64, 1))
    match = _matches(b, base, words)
    last = b.icmp_unsigned("==", b.load(_control(b, block, spec, 1), typ=I64), ir.Constant(I64, 1))
    b.store(b.zext(b.or_(b.or_(empty, match), last), I64), _control(b, block, spec, 0))
    b.store(b.zext(match, I64), _control(b, block, spec, 1))


def lower_cached_load(ctx: LoweringContext, load: O.Load, spec: CachedOperand, fill: Callable[[Tile], None]) -> Tile:
    """The load's tile, from its slot where the key matches, else filled by `fill` (into the slot, or into a stack
    buffer past the slots or in a program that does not use them)."""
    b = ctx.b
    res = load.result
    ety = llvm_type(res.type)
    local = ctx.new_buffer_tile(res.type.shape, ety, "ld")
    block = ctx.operand_cache
    assert block is not None
    slot = _iteration(ctx, load)
    words = [_word(b, ctx.scalar(v)) for v in spec.leaves]
    allocated = b.icmp_unsigned("!=", b.ptrtoint(block, I64), ir.Constant(I64, 0))
    with b.if_then(b.and_(allocated, b.icmp_unsigned("==", slot, ir.Constant(I64, 0)))):
        _decide(ctx, block, spec, words)
    # `mode` read through a zero word where the allocation failed
    zero = ctx.alloca(I64, 1, "no.cache")
    b.store(ir.Constant(I64, 0), zero)
    mode = b.load(b.select(allocated, _control(b, block, spec, 0), zero), typ=I64)
    ok = b.and_(
        b.icmp_unsigned("<", slot, ir.Constant(I64, spec.slots)), b.icmp_unsigned("==", mode, ir.Constant(I64, 1))
    )
    with b.if_else(ok) as (cached, uncached):
        with cached:
            base = _slot(b, block, spec, slot)
            data = b.gep(base, [ir.Constant(I64, spec.header_bytes)], source_etype=I8)
            with b.if_then(b.not_(_matches(b, base, words))):
                fill(Tile(res.type.shape, ety, buf=data))
                for i, w in enumerate(words):
                    b.store(w, _key_word(b, base, i))
                b.store(ir.Constant(I64, 1), base)
            cached_end = b.block
        with uncached:
            fill(local)
            uncached_end = b.block
    buf = b.phi(PTR, name="operand")
    buf.add_incoming(data, cached_end)
    buf.add_incoming(local.buf, uncached_end)
    return Tile(res.type.shape, ety, buf=buf)
