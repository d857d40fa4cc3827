"""The lowering context cpu_ref's rules receive, and the tile model they share.

A Triton tensor becomes a `Tile`: a static shape plus either a buffer (row-major, on the program's stack) or a
generator that emits the code for one element at a given index. Elementwise ops, shape ops and constants build
generators, so a chain like `x * 2 + y` becomes one loop when a consumer (store, reduce, dot) finally walks the
tile; a value is written to a buffer only when it is expensive and used twice, crosses into a loop, or its consumer
needs memory. Loads, reductions and loop-carried values always live in buffers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from llvmlite import ir
from triton_backend_sdk.analysis.axis_info import proven_uniform
from triton_backend_sdk.analysis.tile_model import stored
from triton_backend_sdk.custom_ops import runs_in_place
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir.core import Block, Op, Value
from triton_backend_sdk.lowering import RuleTable
from triton_backend_sdk.options import Options

from .types import I1, I32, I64, PTR, buffer_type, llvm_type, storage_type

ElemGen = Callable[[ir.IRBuilder, list[ir.Value]], ir.Value]


def strides_of(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


@dataclass
class Tile:
    shape: tuple[int, ...]
    #: LLVM type of one element as computed (i1 for booleans)
    ety: ir.Type
    buf: ir.Value | None = None
    gen: ElemGen | None = None
    cost: int = 0

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element(self, b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        if self.buf is None:
            assert self.gen is not None
            return self.gen(b, idx)
        ptr = b.gep(self.buf, [linear_index(b, self.shape, idx)], source_etype=buffer_type(self.ety))
        v = b.load(ptr, typ=buffer_type(self.ety))
        return b.trunc(v, I1) if self.ety == I1 else v


def _uniform(b: ir.IRBuilder, v: Value, t: Tile) -> Tile:
    """`t` evaluated once, here, at index 0 where AxisInfo proves `v` the same at every index (constancy covering
    each dimension): Inductor's channel index `(x // HW) % C` inside one block, and the per-channel pointers, loads
    and arithmetic built on it. Evaluated in the element loop instead, its loads could not leave the loop (the
    loop's stores may alias them) and LLVM's SLP vectorizer packed the scalar chain into the lanes' vectors
    (batch norm's `1/sqrt(var + eps)`: two vector divisions per 16 elements)."""
    if not t.shape or not proven_uniform(v):
        return t
    assert t.gen is not None
    x = t.gen(b, [ir.Constant(I64, 0)] * len(t.shape))
    return Tile(t.shape, t.ety, gen=lambda b, idx: x, cost=0)


def linear_index(b: ir.IRBuilder, shape: Sequence[int], idx: list[ir.Value]) -> ir.Value:
    if not shape:
        return ir.Constant(I64, 0)
    acc: ir.Value | None = None
    for i, s in zip(idx, strides_of(shape)):
        term = i if s == 1 else b.mul(i, ir.Constant(I64, s), flags=["nuw", "nsw"])
        acc = term if acc is None else b.add(acc, term, flags=["nuw", "nsw"])
    assert acc is not None
    return acc


class LoweringContext:
    """State of lowering one function: the builder, values lowered so far, the program ids, buffers."""

    def __init__(
        self,
        module: ir.Module,
        fn: ir.Function,
        rules: RuleTable,
        options: Options,
        program_ids: list[ir.Value],
        num_programs: list[ir.Value],
        functions: dict[str, ir.Function],
        target: TargetDescriptor | None = None,
    ) -> None:
        self.module, self.fn, self.rules, self.options = module, fn, rules, options
        #: the program's ids and the grid's size along x, y, z (i32 arguments of the program function)
        self.program_ids, self.num_programs = program_ids, num_programs
        #: every function of the module by its SDK name (calls between them)
        self.functions = functions
        entry = fn.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(entry)
        body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self._entry = entry
        self._body = body
        self.values: dict[Value, Any] = {}
        #: functions that may fail a `tt.assert` (a call to one is followed by an abort check)
        self.may_fail: set[str] = set()
        #: in a function that may fail: its pointer to the launch's assert state (debug.py), a hidden last parameter
        self.assert_state: ir.Value | None = None
        #: for bodies of several blocks: LLVM block and argument slots of each SDK block
        self.block_targets: dict[Block, tuple[ir.Block, list[Any]]] = {}
        #: results of reductions computed where their operand's buffer was filled (fused_fill.py), by reduce op
        self.fused_results: dict[Op, Any] = {}
        self.fastmath: tuple[str, ...] = ("contract",) if options.enable_fp_fusion else ()
        #: tt.store ops that may be non-temporal (sdk/analysis/streaming_stores.py), and whether any was: the entry
        #: then fences after its last program
        self.streaming_stores: frozenset[Op] = frozenset()
        #: smaller tt.store ops that stream where the launch writes LAUNCH_STREAM_BYTES through them (tested when
        #: the kernel runs)
        self.launch_streaming_stores: frozenset[Op] = frozenset()
        self.streams = False
        #: in a kernel with reusable dot operands (operand_cache.py): the chunk's block (hidden parameter), and the
        #: slots of each load kept in it
        self.operand_cache: ir.Value | None = None
        self.cached_operands: dict[Op, Any] = {}
        if target is None:  # a caller outside the compile pipeline (tests, tools): this host's descriptor
            from ..compiler import host_descriptor

            target = host_descriptor()
        #: the device compiled for: vector widths (dot register blocking, reduction lanes) come from it
        self.target = target
        self.vector_bits = target.vector_width_bits

    def finish(self) -> None:
        """Close the alloca block once every buffer has been placed in it."""
        self.alloca_builder.position_at_end(self._entry)
        self.alloca_builder.branch(self._body)

    # ---- values ------------------------------------------------------------------------------------------------

    def get(self, v: Value) -> Any:
        try:
            return self.values[v]
        except KeyError:
            raise AssertionError(f"value {v!r} used before it was lowered") from None

    def scalar(self, v: Value) -> ir.Value:
        x = self.get(v)
        assert not isinstance(x, Tile), f"{v!r} is a tensor where a scalar was expected"
        return x

    def tile(self, v: Value) -> Tile:
        x = self.get(v)
        assert isinstance(x, Tile), f"{v!r} is a scalar where a tensor was expected"
        return x

    def define(self, v: Value, x: Any) -> None:
        """Bind a lowered value; generators that would be recomputed expensively are stored first.

        Pointer tiles stay generators: their addresses are affine in the tile index, which is what lets LLVM turn
        loads and stores into contiguous vector accesses; stored, they would become gathers. The result of an op
        with effects (a custom op declared `pure=False`) is stored at once: its elements are computed here, once
        each, in program order, whether or not anything reads them.
        """
        if isinstance(x, Tile) and x.buf is None:
            if runs_in_place(v):
                x = self.materialize(x)
            else:
                x = _uniform(self.b, v, x)
                if x.ety != PTR and stored(x.cost, v):
                    x = self._store_value(v, x)
        self.values[v] = x

    def _store_value(self, v: Value, x: Tile) -> Tile:
        """`x` written to a buffer, in one loop with the row reductions that read it (fused_fill.py)."""
        from .fused_fill import fill_reducing, generator_vectors

        fused, out = fill_reducing(self, v, x.ety, generator_vectors(self, x))
        if not fused:
            return self.materialize(x)
        return x if out is None else out

    def element_of(self, v: Value, idx: list[ir.Value], shape: tuple[int, ...]) -> ir.Value:
        """Element `idx` of value `v` viewed at `shape` (a scalar is the same at every index)."""
        x = self.get(v)
        if isinstance(x, Tile):
            return x.element(self.b, idx)
        return x

    # ---- buffers -----------------------------------------------------------------------------------------------

    def alloca(self, ety: ir.Type, n: int, name: str = "buf") -> ir.Value:
        """Stack storage in the entry block (so loops reuse it), aligned for vector access."""
        st = buffer_type(ety)
        arr = self.alloca_builder.alloca(ir.ArrayType(st, max(n, 1)), name=name)
        arr.align = 64
        arr.type = PTR  # opaque, so that llvmlite types element GEPs by their source element type
        return arr

    def new_buffer_tile(self, shape: tuple[int, ...], ety: ir.Type, name: str = "t") -> Tile:
        n = 1
        for d in shape:
            n *= d
        return Tile(shape, ety, buf=self.alloca(ety, n, name))

    def store_element(self, tile: Tile, idx: list[ir.Value], val: ir.Value) -> None:
        assert tile.buf is not None
        st = buffer_type(tile.ety)
        ptr = self.b.gep(tile.buf, [linear_index(self.b, tile.shape, idx)], source_etype=st)
        self.b.store(self.b.zext(val, st) if tile.ety == I1 else val, ptr)

    def materialize(self, t: Tile, into: Tile | None = None) -> Tile:
        """Write every element of `t` into a buffer (a new one unless `into` is given)."""
        out = into or self.new_buffer_tile(t.shape, t.ety)
        self.loop_nest(t.shape, lambda idx: self.store_element(out, idx, t.element(self.b, idx)))
        return out

    # ---- control flow helpers ----------------------------------------------------------------------------------

    def loop_nest(self, shape: Sequence[int], body: Callable[[list[ir.Value]], None]) -> None:
        """Nested counted loops over `shape` (row-major, innermost last) calling `body(idx)` with i64 indices."""

        def level(d: int, idx: list[ir.Value]) -> None:
            if d == len(shape):
                body(idx)
                return
            self.counted_loop(ir.Constant(I64, shape[d]), lambda i: level(d + 1, idx + [i]), known_nonzero=True)

        level(0, [])

    def counted_loop(
        self,
        n: ir.Value,
        body: Callable[[ir.Value], None],
        known_nonzero: bool = False,
        start: ir.Value | None = None,
        no_unroll: bool = False,
        name: str = "loop",
    ) -> None:
        """for i in [start, n): body(i); i has n's type. `no_unroll` marks the loop `llvm.loop.unroll.disable`: a loop
        meant for LLVM's loop vectorizer, which must see it as a loop (see reduce_scan's lane loop)."""
        b = self.b
        ty = n.type
        start = start if start is not None else ir.Constant(ty, 0)
        pre = b.block
        header = b.append_basic_block(name)
        exit_ = b.append_basic_block(f"{name}.end")
        if known_nonzero:
            b.branch(header)
        else:
            b.cbranch(b.icmp_signed("<", start, n), header, exit_)
        b.position_at_end(header)
        i = b.phi(ty, name="i")
        i.add_incoming(start, pre)
        body(i)
        nxt = b.add(i, ir.Constant(ty, 1), name="i.next", flags=["nuw", "nsw"])
        i.add_incoming(nxt, b.block)
        back = b.cbranch(b.icmp_signed("<", nxt, n), header, exit_)
        if no_unroll:
            module = b.module
            loop_id = module.add_metadata(
                [module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])]
            )
            loop_id.operands = (loop_id, *loop_id.operands)
            back.set_metadata("llvm.loop", loop_id)
        b.position_at_end(exit_)

    def guarded(
        self,
        mask: ir.Value | None,
        ety: ir.Type,
        emit: Callable[[], ir.Value],
        fallback: ir.Value | None = None,
        name: str = "guard",
    ) -> ir.Value:
        """`emit()` where `mask` holds, else `fallback` (zero of `ety` by default): a branch, so that a masked-off
        element never touches memory; LLVM's vectorizer turns it into masked vector accesses."""
        if mask is None or (isinstance(mask, ir.Constant) and mask.constant == 1):
            return emit()
        b = self.b
        pre = b.block
        then = b.append_basic_block(name)
        done = b.append_basic_block(f"{name}.done")
        b.cbranch(mask, then, done)
        b.position_at_end(then)
        v = emit()
        then_end = b.block
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(ety)
        phi.add_incoming(v, then_end)
        phi.add_incoming(fallback if fallback is not None else ir.Constant(ety, None), pre)
        return phi

    def if_then(self, cond: ir.Value, then: Callable[[], None]) -> None:
        with self.b.if_then(cond):
            then()

    # ---- lowering ----------------------------------------------------------------------------------------------

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            self.lower_op(op)

    def lower_op(self, op: Op) -> Any:
        rule = self.rules.lookup(op)
        return rule(self, op)

    def prefetch(self, ptr: ir.Value) -> None:
        """Prefetch the line at `ptr` for reading into every cache level (`llvm.prefetch`, locality 3). A hint:
        x86 and AArch64 prefetches never fault, so `ptr` may lie past the data."""
        i32 = ir.IntType(32)
        fn = self.intrinsic("llvm.prefetch.p0", ir.VoidType(), [PTR, i32, i32, i32])
        self.b.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])

    def intrinsic(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name=name)
        return fn

    def elem_type(self, v: Value) -> ir.Type:
        return llvm_type(v.type)

    def storage_type(self, v: Value) -> ir.Type:
        return storage_type(v.type)

    def const(self, ty: ir.Type, value: Any) -> ir.Constant:
        return ir.Constant(ty, value)

    def i32(self, value: int) -> ir.Constant:
        return ir.Constant(I32, value)
