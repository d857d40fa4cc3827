"""The lazy tile model both backends share: when a tile is stored instead of recomputed, and how wide its vector
work is.

A backend keeps a tensor value as a generator (the code for one element at an index) and fuses chains of them into
the loop of whoever consumes them; it stores a generator only when recomputing it would cost more than a store and
a load. That decision, the cost thresholds it compares against, and the vector plans derived from the target's
vector width (reduction lanes, dot register blocks) are facts about tiles, not about LLVM or C: each backend keeps
only its rendering of a tile (an LLVM buffer and element generator, a C array and expression).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Op, Value
from .uses import sink_of

#: generators cheaper than this are recomputed at each use instead of being stored
CHEAP = 4
#: generators of pure index arithmetic are recomputed up to this cost (a scratch-memory round trip costs more)
CHEAP_INDEX = 24
#: generators used several times in one elementwise chain (`needs_storage`) are recomputed up to this cost: a load
#: and the compares and selects on it (the integer-semantics guards of a divisor or a float→int source, f16 widened:
#: 21), whose repeats a compiler merges (same operands, no write between). Costlier ones are stored: a backend that
#: spells generators as text writes each repeat out, and an external libm call (errno) is not merged
CHAIN_COST = 24
#: generators costlier than this are stored even when used once: a fused chain is emitted as one nested expression,
#: and its depth must stay bounded (Python recursion in the code generators; OpenCL C compilers limit bracket nesting,
#: PoCL's to 256, which a 150-op chain passed). Every op adds at least 1 to the cost, so the depth stays below it
MAX_FUSED_COST = 64
#: accumulator vector registers a dot's register block may hold, by vector width (x86: 32 zmm, 16 ymm/xmm)
_ACC_REGS = {512: 16, 256: 8, 128: 8}


#: bytes of a CPU cache line: what one prefetch brings in
CACHE_LINE = 64
#: a long contiguous row read on a CPU is prefetched this many bytes ahead of the element being read: the hardware
#: streamer restarts at every 4 KiB page and ramps up over its first misses (PoCL's softmax over 4096-wide fp32 rows
#: waited on them: 0.60-0.67x torch without, 0.72-0.78x with 2 KiB ahead, interleaved processes)
PREFETCH_AHEAD_BYTES = 2048
#: bytes a CPU backend keeps of dot operand tiles between consecutive programs on one core
#: (`operand_reuse.py`): half of a 2 MiB L2, the rest left to the tiles that stream through it
OPERAND_CACHE_BYTES = 1 << 20


def row_prefetch_distance(elem_bytes: int, row_elems: int, contiguity: int) -> int | None:
    """Elements ahead of the one being read at which a walk along a row prefetches, or None: only rows at least four
    times the distance long (shorter ones end before the streamer matters, and their lines ahead are another
    row's) whose pointers are proven consecutive over at least a cache line."""
    if row_elems * elem_bytes < 4 * PREFETCH_AHEAD_BYTES or contiguity * elem_bytes < CACHE_LINE:
        return None
    return PREFETCH_AHEAD_BYTES // elem_bytes


def needs_storage(v: Value, cost: int = 0) -> bool:
    """Whether a costly generator for `v` must be stored: it is used by an op in another block (a loop body, which
    would recompute it every iteration), or more than once — unless all its uses lie in one elementwise chain into
    one sink (`uses.sink_of`: each sink element then evaluates `v` at that element only, and the compiler merges
    the repeats) and recomputing it costs at most CHAIN_COST."""
    home = v.owner.parent if isinstance(v.owner, Op) else v.owner
    if any(op.parent is not home for op, _ in v.uses):
        return True
    if len(v.uses) <= 1:
        return False
    return cost > CHAIN_COST or sink_of(v) is None


def stored(cost: int, v: Value, index_only: bool = False) -> bool:
    """The shared decision: a generator of this cost for `v` is stored rather than recomputed."""
    if cost > MAX_FUSED_COST:
        return True
    return cost > (CHEAP_INDEX if index_only else CHEAP) and needs_storage(v, cost)


def fused_row_reductions(v: Value) -> list[O.Reduce]:
    """The reductions of tensor `v` along its last axis that the loop writing `v`'s buffer can compute as it goes
    (one walk of each row instead of two): of `v` alone, in `v`'s block (so nothing can run between the fill and
    the reduction's own place that the fused result would miss), each once. Whether its combine region can be
    folded in vectors is the backend's to decide."""
    home = v.owner.parent if isinstance(v.owner, Op) else v.owner
    shape = v.type.shape if v.type.is_tensor else ()
    out: list[O.Reduce] = []
    for user, _ in v.uses:
        if not shape or not isinstance(user, O.Reduce) or user in out:
            continue
        if user.parent is home and len(user.operands) == 1 and user.axis == len(shape) - 1:
            out.append(user)
    return out


def reduction_plan(vector_bits: int, elem_bits: int, n: int, max_acc: int = 4) -> tuple[int, int] | None:
    """(V, A) for a row of `n` elements folded in A independent accumulators of V lanes (V from the vector width,
    A up to `max_acc` to hide the combine's latency), or None when the row does not split into whole vectors.

    4 suits explicit vector accumulators (cpu_ref). Where the lanes are a scalar array that the device compiler
    vectorizes (opencl's work-item partials) fewer are faster: on PoCL (AVX2) layer norm ran ~10% slower with
    4 vectors of partials than with 2, the compiler's vectorized loop body holding more live registers."""
    v = vector_bits // elem_bits
    if v < 2 or n % v:
        return None
    a = 1
    while a < max_acc and n % (v * a * 2) == 0:
        a *= 2
    return v, a


def register_block(vector_bits: int, elem_bits: int, m: int, n: int) -> tuple[int, int, int] | None:
    """(MR, NV, V) for a dot's m × n output: MR rows by NV vectors of V lanes held in registers across k, within
    the accumulator registers the vector width has; None when n does not split into whole vectors."""
    v = vector_bits // elem_bits
    if v < 2 or n % v:
        return None
    nv = 1
    while nv < 4 and n % (v * nv * 2) == 0:
        nv *= 2
    budget = _ACC_REGS.get(vector_bits, 8)
    mr = 1
    while mr * 2 * nv <= budget and m % (mr * 2) == 0 and mr < 8:
        mr *= 2
    return mr, nv, v
