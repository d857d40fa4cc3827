"""The work-group execution model and the state of rendering one kernel.

One Triton program is one OpenCL work-group of L = num_warps × warp_size work-items. A tensor of N elements (N is a
power of two, as Triton requires) is spread over the group in its *canonical layout*: work-item `lid` holds elements
`r*L + lid` for r in [0, R), R = max(1, N/L), in a private array `T t[R]`; when N < L work-items hold element
`lid % N` (duplicates), and side effects (stores, atomics, local-memory writes) are done only by `lid < N`.
Consecutive work-items hold consecutive elements, so loads and stores of row-major tiles are coalesced.

A tile is either held in registers (`Tile.reg`) or is a generator: a C expression for the element at a given index
(`Tile.gen`), so index arithmetic, splats, broadcasts and elementwise chains are recomputed where consumed instead of
stored. An element a work-item does not hold (a broadcast, transpose, gather of a register tile) is read from local
memory: before the loop that needs it, the tile is *published* — written to the shared scratch area between two
barriers — and the loop reads it there. Reductions, scans and `tl.dot` go through the same scratch area.

All control flow is uniform across the work-group (every scalar is computed identically by every work-item; scalar
atomics and volatile scalar loads are done by work-item 0 and broadcast through local memory), so barriers inside
loops and branches are safe.

Where the scratch area is, is a render decision (`scratch_space`): local memory by default; global memory (this
program's region of a buffer the launcher passes) when the kernel needs more scratch than the device's local memory
holds. The rules address it only through `local_array` and order it only through `barrier`, so both spaces render
from the same rules; in global memory the barriers also fence global memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from triton_backend_sdk.analysis.axis_info import proven_uniform
from triton_backend_sdk.analysis.tile_model import stored
from triton_backend_sdk.custom_ops import runs_in_place
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir.core import Block, Op, Value
from triton_backend_sdk.ir.types import PointerType
from triton_backend_sdk.lowering import RuleTable

from . import ctypes as CT
from .language import CStyleLanguage

#: scratch offsets are aligned to this many bytes
ALIGN = 16
#: the scratch area in the work-group's local memory
SCRATCH_LOCAL = "local"
#: the scratch area in a per-program region of a global buffer (a kernel whose scratch exceeds local memory)
SCRATCH_GLOBAL = "global"
#: tile loops of at most this many register slots are unrolled (longer ones, on devices with few work-items per
#: program, stay loops for the compiler to vectorize)
MAX_UNROLL = 32
#: a tile of at least VEC × L elements whose last dimension is a multiple of VEC, on a multi-work-item group, is held
#: in runs of VEC consecutive elements per work-item (Triton's sizePerThread=4 blocked layout; for a 2-D tile, runs
#: along its rows), so contiguous aligned loads/stores can be 128-bit accesses. 2-D tiles joined 1-D ones for
#: tutorial 03's operand loads on NVIDIA: 16 scalar loads of A and 16 of B per k step and work-item became 4 + 4
VEC = 4


@dataclass(frozen=True)
class ScratchArray:
    """The scratch area at byte `offset` as an array of `ctype`: indexing it (`arr[idx]`) gives the C lvalue.

    The area is the union `tb_scratch` with one array member per element type the kernel keeps there, and every
    access names its member: OpenCL C (6.4.4.1) defines reading a union's bytes through another member, while casting
    the bytes to each type (as this did before) is undefined behaviour under C's aliasing rules, which compilers use:
    PoCL's LLVM moved a float store past a long store to the same bytes once one work-item per group made the
    barriers between them no-ops (a wrong argmin; fuzz seed 303 kernel 1152)."""

    ctype: str
    offset: int
    #: a run-time element offset added to every index (a C expression; "" for none): the copy of a double buffer
    #: chosen by the iteration's parity (dot_blocked.DoubleBuffer)
    shift: str = ""

    def __post_init__(self) -> None:
        if self.offset % CT.size_of(self.ctype):
            raise AssertionError(f"scratch offset {self.offset} is not a multiple of sizeof({self.ctype})")

    def __getitem__(self, idx: str) -> str:
        base, idx = self.offset // CT.size_of(self.ctype), str(idx)
        if self.shift:
            head = f"{base}u + {self.shift}" if base else self.shift
            at = f"{head} + {idx}" if re.fullmatch(r"\w+", idx) else f"{head} + ({idx})"
        elif base == 0:
            at = idx
        elif re.fullmatch(r"\d+u?", idx):
            at = f"{base + int(idx.rstrip('u'))}u"
        else:
            at = f"{base}u + {idx}" if re.fullmatch(r"\w+", idx) else f"{base}u + ({idx})"
        return f"tb_smem->{scratch_member(self.ctype)}[{at}]"

    def address(self, idx: str) -> str:
        """A pointer to element `idx` (for atomics and vector loads)."""
        return f"&{self[idx]}"

    def __format__(self, spec: str) -> str:
        raise AssertionError("a ScratchArray is indexed (arr[idx]), never formatted as a pointer")


def scratch_member(ctype: str) -> str:
    """The member of the union `tb_scratch` that holds `ctype` elements."""
    return "tb_" + ctype.replace(" ", "_")


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def log2(n: int) -> int:
    return n.bit_length() - 1


def strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def check_pow2(shape: tuple[int, ...], backend: str, loc: Any) -> None:
    for d in shape:
        if d < 1 or d & (d - 1):
            raise UnsupportedError(backend, f"tensor shape {list(shape)} (every dimension must be a power of two)", loc)


#: bytes a one-work-item program's register tiles are aligned to (a cache line; the widest vector)
TILE_ALIGNMENT = 64


class Idx:
    """An element position in a tile of `shape`: a linear index and/or per-dimension indices, as C `uint` expressions.

    `slot` is set when the position is the canonical one of register slot `slot` of the current work-item, so a
    register tile of the same size can be read as `t[slot]` without going through local memory.
    """

    def __init__(
        self, shape: tuple[int, ...], lin: str | None = None, dims: list[str] | None = None, slot: str | None = None
    ) -> None:
        assert lin is not None or dims is not None
        self.shape = shape
        self._lin = lin
        self._dims = dims
        self.slot = slot

    @property
    def lin(self) -> str:
        if self._lin is None:
            assert self._dims is not None
            terms = []
            for d, s in zip(self._dims, strides(self.shape)):
                if d == "0u":
                    continue
                terms.append(d if s == 1 else f"({d} << {log2(s)})")
            self._lin = "(" + " + ".join(terms) + ")" if terms else "0u"
        return self._lin

    def dim(self, k: int) -> str:
        if self._dims is not None:
            return self._dims[k]
        n = self.shape[k]
        if n == 1:
            return "0u"
        s = strides(self.shape)[k]
        x = self.lin if s == 1 else f"({self.lin} >> {log2(s)})"
        return x if k == 0 else f"({x} & {n - 1}u)"

    @property
    def dims(self) -> list[str]:
        return [self.dim(k) for k in range(len(self.shape))]

    def reshaped(self, shape: tuple[int, ...]) -> Idx:
        """The same element seen at another shape of equal size (reshape, expand_dims keep the linear index)."""
        return Idx(shape, lin=self.lin, slot=self.slot)

    @staticmethod
    def of_dims(shape: tuple[int, ...], dims: list[str]) -> Idx:
        return Idx(shape, dims=dims)


@dataclass
class Tile:
    shape: tuple[int, ...]
    #: the C type an element is computed in
    ctype: str
    #: private array holding the work-item's elements in the canonical layout
    reg: str | None = None
    gen: Callable[[Idx], str] | None = None
    cost: int = 0
    #: the generator reads no register tile (pure index / scalar arithmetic): cheap to recompute anywhere
    index_only: bool = False
    #: `reg` holds the elements in this layout instead of the canonical one (dot_blocked.BlockedLayout: it has
    #: `for_each(ctx, body(idx, slot))`); every read goes through local memory
    layout: Any = None

    @property
    def numel(self) -> int:
        return numel(self.shape)


@dataclass
class PublishGroup:
    base: int
    items: list[tuple[Tile, int]] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)


class RenderContext:
    def __init__(
        self,
        rules: RuleTable,
        lang: CStyleLanguage,
        local_size: int,
        features: frozenset[str],
        device: str,
        fp_fusion: bool = True,
        vector_bits: int = 128,
        scratch_space: str = SCRATCH_LOCAL,
        double_buffer: bool = False,
    ) -> None:
        if scratch_space not in (SCRATCH_LOCAL, SCRATCH_GLOBAL):
            raise ValueError(f"scratch_space must be {SCRATCH_LOCAL!r} or {SCRATCH_GLOBAL!r}, got {scratch_space!r}")
        self.rules = rules
        self.lang = lang
        self.L = local_size
        self.features = features
        self.device = device
        self.fp_fusion = fp_fusion
        #: the device's vector width (TargetDescriptor.vector_width_bits): the shared tile model's vector plans
        self.vector_bits = vector_bits
        #: where the scratch area `tb_smem` lives (SCRATCH_LOCAL or SCRATCH_GLOBAL)
        self.scratch_space = scratch_space
        #: whether a loop-carried blocked dot may stage its operands in two copies (dot_blocked.double_buffered)
        self.double_buffer = double_buffer
        #: the double buffer of each such dot being rendered, by id of the dot op; whether the kernel has one
        self.dot_buffers: dict[int, Any] = {}
        self.double_buffered = False
        self.backend = rules.backend
        self.values: dict[Value, Any] = {}
        #: tt.store ops of the kernel written with the language's non-temporal store (render/streaming.py)
        self.streaming_stores: frozenset[Op] = frozenset()
        #: smaller ones written both ways, streaming where the launch writes LAUNCH_STREAM_BYTES through them
        self.launch_streaming_stores: frozenset[Op] = frozenset()
        #: results of reductions computed where their operand was stored (row_walk.py), by reduce op
        self.fused_results: dict[Op, list[Any]] = {}
        self._lines: list[list[str]] = [[]]
        self._indent = 1
        self._names: dict[str, int] = {}
        self.helpers: list[str] = []
        self.helper_text: dict[str, str] = CT.helpers(lang)
        self.uses_fp64 = False
        self.uses_int64_atomics = False
        self.scratch_top = 0
        self.scratch_max = 0
        #: the element types the kernel keeps in the scratch area (the members of the union `tb_scratch`)
        self.scratch_ctypes: set[str] = set()
        self._groups: list[PublishGroup] = []
        self.call_stack: list[str] = []
        self.functions: dict[str, Any] = {}
        #: labels and argument variables of the blocks of multi-block function bodies
        self.labels: dict[Block, str] = {}
        self.block_vars: dict[Block, list[Any]] = {}
        #: kernel parameters (by index) that the kernel may write through (stores, atomics)
        self.written_params: set[int] = set()
        #: [message, source location] of each tt.assert, by the number the kernel records (render/debug.py)
        self.asserts: list[list[str]] = []
        #: whether the kernel calls printf (tt.print)
        self.prints = False
        #: whether the kernel scales a cycle counter: it takes the hidden parameter render/clock.py's SCALE
        self.clock_scale = False

    # ---- emission ----------------------------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        pad = "  " * self._indent
        for part in line.split("\n"):
            self._lines[-1].append(pad + part if part else part)

    @contextmanager
    def indent(self) -> Iterator[None]:
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        """Collect the lines emitted inside the block instead of emitting them (they are re-emitted later)."""
        self._lines.append([])
        try:
            yield self._lines[-1]
        finally:
            self._lines.pop()

    def emit_lines(self, lines: list[str]) -> None:
        self._lines[-1].extend(lines)

    @property
    def lines(self) -> list[str]:
        return self._lines[0]

    def fresh(self, hint: str = "v") -> str:
        hint = re.sub(r"[^A-Za-z0-9_]", "_", hint or "v")[:24] or "v"
        n = self._names.get(hint, 0)
        self._names[hint] = n + 1
        return f"{hint}_{n}" if hint[-1].isdigit() else f"{hint}{n}"

    def name_for(self, v: Value, prefix: str = "v") -> str:
        hint = v.name if v.name and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v.name) else ""
        return self.fresh(f"{prefix}_{hint}" if hint else prefix)

    def define_helper(self, name: str, text: str) -> str:
        """Use a helper generated for a type (integer division, shifts); `text` defines it."""
        self.helper_text[name] = text
        return self.helper(name)

    def fp8_helper(self, t: Any, kind: str) -> str:
        """The encoder (`enc`, `enc_rtz`), decoder (`dec`) or the decoder's inverse (`code`) of fp8 type `t`, added
        to the program."""
        fmt = CT.fp8_of(t)
        assert fmt is not None
        if kind == "code" and not fmt.ieee:
            kind = "enc"  # no infinity and one NaN a sign: the encoder already inverts the decoder
        for name, text in CT.fp8_helpers(fmt, self.lang).items():
            self.helper_text.setdefault(name, text)
        return self.helper(f"tb_{fmt.name}_{kind}")

    def helper(self, name: str) -> str:
        for dep in CT.HELPER_DEPS.get(name, ()):
            self.helper(dep)
        if name not in self.helpers:
            self.helpers.append(name)
        return name

    def unsupported(self, what: str, op: Op | None = None) -> UnsupportedError:
        return UnsupportedError(self.backend, what, op.loc if op is not None else None)

    # ---- values ------------------------------------------------------------------------------------------------

    def get(self, v: Value) -> Any:
        try:
            return self.values[v]
        except KeyError:
            raise AssertionError(f"value {v!r} used before it was rendered") from None

    def tile(self, v: Value) -> Tile:
        x = self.get(v)
        assert isinstance(x, Tile), f"{v!r} is a scalar where a tensor was expected"
        return x

    def scalar(self, v: Value) -> str:
        x = self.get(v)
        assert isinstance(x, str), f"{v!r} is a tensor where a scalar was expected"
        return x

    def ctype(self, v: Value) -> str:
        try:
            c = CT.ctype(v.type, self.lang.global_qual)
        except CT.TypeError_ as e:
            owner = v.owner if isinstance(v.owner, Op) else None
            raise self.unsupported(f"values of type {e} on OpenCL", owner) from None
        if c == "double":
            self.require_fp64(v.owner if isinstance(v.owner, Op) else None)
        return c

    def require_fp64(self, op: Op | None) -> None:
        if "cl_khr_fp64" not in self.features:
            raise self.unsupported(f"dtype fp64: device {self.device!r} does not support cl_khr_fp64", op)
        self.uses_fp64 = True

    def define(self, v: Value, x: Any) -> None:
        """Bind a rendered value. Scalars become named C variables; costly generators used twice are stored."""
        if isinstance(x, str):
            if self.L > 1 and runs_in_place(v):
                raise UnsupportedError(
                    self.backend,
                    f"{v.owner.op_name} has effects and scalar operands: every one of the program's {self.L} "
                    f"work-items would run it (give it 1-element tensors, or launch with work_items=1)",
                    v.owner.loc,
                )
            if not _is_simple(x):
                name = self.name_for(v)
                self.emit(f"{self.ctype(v)} {name} = {x};")
                x = name
        elif (
            isinstance(x, Tile) and x.reg is None and not isinstance(v.type.element, PointerType) and proven_uniform(v)
        ):
            x = self._uniform(v, x)
        elif isinstance(x, Tile) and x.reg is None and (stored(x.cost, v, x.index_only) or runs_in_place(v)):
            # an op with effects (a custom op declared pure=False) runs here, once per element, used or not
            x = self._store_value(v, x)
        self.values[v] = x

    def _uniform(self, v: Value, x: Tile) -> Tile:
        """A tile AxisInfo proves the same at every index, computed once here as a named scalar (batch norm's
        per-channel loads and `1 / sqrt(var + eps)`: a division, a remainder, four loads and a sqrt per element
        otherwise, and the chain stored to a private array because two selects read it)."""
        with self.loop_body() as (inner, base):
            value = self.element(x, Idx(x.shape, lin="0u"))
        if not inner and _is_simple(value):  # a splat of a named scalar or a constant: nothing to compute
            self.scratch_top = base
            return x
        name = self.name_for(v)
        self.emit_lines(inner)
        self.emit(f"const {x.ctype} {name} = {value};")
        self.scratch_top = base
        return Tile(x.shape, x.ctype, gen=lambda idx: name, index_only=True)

    def _store_value(self, v: Value, x: Tile) -> Tile:
        """`x` stored in a register tile, in one walk with the row reductions that read it (row_walk.py)."""
        from .row_walk import fill_reducing

        name = self.name_for(v, "t")
        if not runs_in_place(v):
            fused = fill_reducing(self, v, lambda idx: self.element(x, idx), name)
            if fused is not None:
                return fused
        return self.materialize(x, name)

    def element(self, x: Any, idx: Idx) -> str:
        """The element of a rendered value at `idx` (a scalar is the same everywhere)."""
        if isinstance(x, str):
            return x
        t: Tile = x
        if t.reg is None:
            assert t.gen is not None
            return t.gen(idx)
        if t.layout is not None:
            return self.published(t)[idx.lin]
        if t.numel == 1:
            return f"{t.reg}[0]"
        if self.L == 1:  # one work-item holds every element in order: any element is in its own registers
            return f"{t.reg}[{idx.lin}]"
        if idx.slot is not None and numel(idx.shape) == t.numel and self.vec_of(idx.shape) == self.vec_of(t.shape):
            return f"{t.reg}[{idx.slot}]"
        return self.published(t)[idx.lin]

    def vec_of(self, shape: tuple[int, ...]) -> int:
        """Consecutive elements a work-item holds per run in the canonical layout of `shape` (VEC or 1)."""
        return VEC if self.L > 1 and shape and shape[-1] % VEC == 0 and numel(shape) >= VEC * self.L else 1

    # ---- the scratch area (local memory, or global memory where it does not fit) -----------------------------------

    def alloc(self, nbytes: int) -> int:
        off = self.scratch_top
        self.scratch_top = off + (nbytes + ALIGN - 1) // ALIGN * ALIGN
        self.scratch_max = max(self.scratch_max, self.scratch_top)
        return off

    @property
    def scratch_qual(self) -> str:
        """The address-space qualifier of the scratch area."""
        return self.lang.global_qual if self.scratch_space == SCRATCH_GLOBAL else self.lang.local_qual

    def local_array(self, ctype: str, offset: int, shift: str = "") -> ScratchArray:
        """The scratch area at byte `offset` (plus `shift` elements, a C expression) as an array of `ctype`, shared by
        the work-group."""
        self.scratch_ctypes.add(ctype)
        return ScratchArray(ctype, offset, shift)

    def published(self, t: Tile) -> ScratchArray:
        """Local-memory copy of register tile `t`, written before the loop now being built."""
        if not self._groups:
            raise AssertionError("a register tile was read out of its layout outside a tile loop")
        g = self._groups[-1]
        off = g.offsets.get(id(t))
        if off is None:
            off = self.alloc(t.numel * CT.size_of(t.ctype))
            g.offsets[id(t)] = off
            g.items.append((t, off))
        return self.local_array(t.ctype, off)

    def barrier(self) -> None:
        """A work-group barrier ordering the scratch area's accesses (global ones too when it is in global memory)."""
        self.emit(self.lang.full_barrier if self.scratch_space == SCRATCH_GLOBAL else self.lang.barrier)

    def write_scratch(self, x: Any, shape: tuple[int, ...], ctype: str, offset: int, shift: str = "") -> ScratchArray:
        """Write every element of `x` (viewed at `shape`) to local memory at `offset` (plus `shift` elements);
        returns the array."""
        arr = self.local_array(ctype, offset, shift)
        if isinstance(x, Tile) and x.layout is not None:
            x.layout.for_each(self, lambda idx, slot: self.emit(f"{arr[idx.lin]} = {x.reg}[{slot}];"))
            return arr
        self.tile_loop(shape, lambda idx: self.emit(f"{arr[idx.lin]} = {self.element(x, idx)};"), owner=True)
        return arr

    # ---- loops over a tile's elements ---------------------------------------------------------------------------

    def tile_loop(
        self,
        shape: tuple[int, ...],
        body: Callable[[Idx], None],
        owner: bool = False,
        lanes: tuple[int, str, str, bool] | None = None,
    ) -> None:
        """Emit `body` once per element the work-item holds of a tile of `shape` (canonical layout).

        `owner`: run the body only on the work-item that owns the element (no duplicates when the tile is smaller
        than the group). Register tiles the body reads out of layout are published to local memory first.
        `lanes` = (P, q, j, first): the slots are visited as r = q*P + j with the inner loop over lane j (P divides
        the slot count) unrolled, so that P independent chains (per-lane partial results) can be vectorized; only
        chunk q = 0 when `first`, else the chunks after it.
        """
        n = numel(shape)
        reps = max(1, n // self.L)
        r, i = self.fresh("r"), self.fresh("i")
        if lanes is not None:
            assert reps % lanes[0] == 0 and n >= self.L
        group = PublishGroup(self.scratch_top)
        self._groups.append(group)
        with self.capture() as inner, self.indent():
            body(Idx(shape, lin=i, slot=r))
        self._groups.pop()
        if group.items:
            self.barrier()
            for t, off in group.items:
                self.write_scratch(t, t.shape, t.ctype, off)
            self.barrier()
        if lanes is not None:
            p, q, j, first = lanes
            if first:
                self.emit(f"{{ const uint {q} = 0u;")
            else:
                self.emit(f"for (uint {q} = 1u; {q} < {reps // p}u; ++{q}) {{")
            self.emit(self.lang.unroll_pragma)
            self.emit(f"for (uint {j} = 0u; {j} < {p}u; ++{j}) {{")
            self.emit(f"  const uint {r} = {q} * {p}u + {j};")
        elif reps == 1:
            self.emit("{")
            self.emit(f"  const uint {r} = 0u;")
        else:
            if reps <= MAX_UNROLL:
                self.emit(self.lang.unroll_pragma)
            self.emit(f"for (uint {r} = 0u; {r} < {reps}u; ++{r}) {{")
        if self.vec_of(shape) > 1:
            v = self.vec_of(shape)
            self.emit(f"  const uint {i} = ((({r} >> {log2(v)}u) * {self.L}u + lid) << {log2(v)}u) + ({r} & {v - 1}u);")
        elif n >= self.L:
            self.emit(f"  const uint {i} = {r} * {self.L}u + lid;")
        else:
            self.emit(f"  const uint {i} = lid & {n - 1}u;")
        if owner and n < self.L:
            self.emit(f"  if (lid < {n}u) {{")
            self.emit_lines(["  " + line for line in inner])
            self.emit("  }")
        else:
            self.emit_lines(inner)
        self.emit("}")
        if lanes is not None:
            self.emit("}")
        self.scratch_top = group.base

    @contextmanager
    def loop_body(self) -> Iterator[tuple[list[str], int]]:
        """For a hand-made loop over a tile: element expressions built inside the block may read register tiles out
        of layout; those are published (emitted) when the block ends, before the caller emits its loop. Yields
        (lines emitted inside the block, scratch offset to restore once the loop is emitted)."""
        group = PublishGroup(self.scratch_top)
        self._groups.append(group)
        with self.capture() as inner:
            yield inner, group.base
        self._groups.pop()
        if group.items:
            self.barrier()
            for t, off in group.items:
                self.write_scratch(t, t.shape, t.ctype, off)
            self.barrier()

    def declare_tile(self, shape: tuple[int, ...], ctype: str, name: str) -> Tile:
        n = max(1, numel(shape) // self.L)
        # one work-item (a CPU device): a 64-byte aligned stack array, so that vectors at multiples of their width
        # are aligned (`aligned_vector_load`): PoCL placed arrays 8 bytes off a line, every 64-byte vector of
        # tutorial 03's B operand straddled two lines and `vstore16` of the accumulator became 16 + 16 + 32 bytes
        aligned = self.lang.array_alignment(TILE_ALIGNMENT) if self.L == 1 else ""
        self.emit(f"{ctype} {name}[{n}]{aligned};")
        return Tile(shape, ctype, reg=name)

    def materialize(
        self, x: Any, name: str | None = None, shape: tuple[int, ...] | None = None, ctype: str | None = None
    ) -> Tile:
        """Store every element the work-item holds of `x` in a new register tile."""
        if isinstance(x, Tile):
            shape, ctype = x.shape, x.ctype
        assert shape is not None and ctype is not None
        out = self.declare_tile(shape, ctype, name or self.fresh("t"))
        self.assign_tile(out, x)
        return out

    def assign_tile(self, dst: Tile, x: Any) -> None:
        self.tile_loop(dst.shape, lambda idx: self.emit(f"{dst.reg}[{idx.slot}] = {self.element(x, idx)};"))

    # ---- ops and blocks ------------------------------------------------------------------------------------------

    def render_op(self, op: Op) -> None:
        self.rules.lookup(op)(self, op)

    def render_block(self, block: Block) -> Op | None:
        """Render a block's ops but its terminator, which is returned for the enclosing op's rule to handle."""
        for op in block.ops:
            if op.terminator:
                return op
            self.render_op(op)
        return None

    def render_region(self, block: Block, args: list[str]) -> list[str]:
        """Render a scalar region (a reduce/scan combiner) with its arguments bound to C expressions; the returned
        expressions are valid in the current C scope."""
        for a, x in zip(block.args, args):
            self.values[a] = x
        term = self.render_block(block)
        assert term is not None
        return [self.scalar(v) for v in term.operands]


def _is_simple(x: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\(?-?[0-9][0-9a-fA-Fx.e+\-]*[fLu]?\)?|true|false", x))
