"""Core structure of the SDK IR: values, operations, blocks, regions, modules and source locations.

The IR is SDK-owned Python (not MLIR bindings) so that vendors can write passes and lowering rules in plain Python
and so that every attribute (float constants included) is readable. One declared Python class per op kind (see
`fields.py` and `dialects/`); lowering tables dispatch on those classes. `OP_CLASSES` maps an MLIR op name to its
class; the reader falls back to `UnknownOp`, which keeps the name so that a backend can say which op it cannot lower.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from . import fields
from .attrs import Attribute
from .types import Type


@dataclass(frozen=True)
class Location:
    """A source position; `name` is the Python variable the value was bound to, where Triton recorded it."""

    file: str
    line: int
    col: int
    name: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Value:
    """An SSA value: an op result or a block argument. `uses` lists (op, operand index) pairs."""

    __slots__ = ("name", "type", "uses")

    def __init__(self, type: Type, name: str | None = None) -> None:
        self.type = type
        self.name = name
        self.uses: list[tuple[Op, int]] = []

    @property
    def owner(self) -> Op | Block:
        """The op that defines this value (an op result), or the block it is an argument of."""
        raise NotImplementedError

    def replace_all_uses_with(self, other: Value) -> None:
        for op, i in list(self.uses):
            op.set_operand(i, other)

    def __repr__(self) -> str:
        return f"%{self.name or '?'}: {self.type}"


class OpResult(Value):
    __slots__ = ("index", "op")

    def __init__(self, type: Type, op: Op, index: int, name: str | None = None) -> None:
        super().__init__(type, name)
        self.op = op
        self.index = index

    @property
    def owner(self) -> Op:
        return self.op


class BlockArgument(Value):
    __slots__ = ("block", "index", "loc")

    def __init__(
        self, type: Type, block: Block, index: int, name: str | None = None, loc: Location | None = None
    ) -> None:
        super().__init__(type, name)
        self.block = block
        self.index = index
        self.loc = loc

    @property
    def owner(self) -> Block:
        return self.block


class Block:
    def __init__(
        self, arg_types: Sequence[Type] = (), arg_names: Sequence[str | None] = (), label: str | None = None
    ) -> None:
        names = list(arg_names) + [None] * (len(arg_types) - len(arg_names))
        self.args: list[BlockArgument] = [
            BlockArgument(t, self, i, n) for i, (t, n) in enumerate(zip(arg_types, names))
        ]
        self.ops: list[Op] = []
        self.parent: Region | None = None
        self.label = label

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Op) -> Op:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def remove(self, op: Op) -> None:
        self.ops.remove(op)
        op.parent = None

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops else None

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)


class Region:
    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.parent: Op | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry(self) -> Block:
        return self.blocks[0]


class Op:
    """An operation. Subclasses fix `name` (the MLIR op name) and declare their fields (`fields.py`): operands,
    results, successors and attributes, an `assembly_format` (or a `parse_custom`/`print_custom` pair) and `verify_`.

    `attrs` maps MLIR attribute names to `Attribute`s, both inherent (`axis`, `predicate`, ...) and discardable ones.
    A plain subclass declaring only `name` is read and printed in MLIR's generic form.
    """

    name: ClassVar[str] = ""
    #: elementwise ops map each element of their tensor operands to the same element of the result
    elementwise: ClassVar[bool] = False
    #: ops whose result depends only on operands (no memory effects, no side effects)
    pure: ClassVar[bool] = False
    terminator: ClassVar[bool] = False
    #: a terminator MLIR leaves out of the text when it carries nothing (`scf.yield` of result-less loops and ifs)
    implicit_terminator: ClassVar[bool] = False
    #: regions that cannot use values defined outside the op (`tt.func`)
    isolated_from_above: ClassVar[bool] = False
    #: the op's custom syntax (see `syntax.py`); None: the generic form
    assembly_format: ClassVar[str | None] = None

    # Filled from the declared fields by `fields.collect` for every subclass.
    operand_defs: ClassVar[tuple[fields.OperandDef, ...]] = ()
    operand_index: ClassVar[dict[str, int]] = {}
    fixed_operands: ClassVar[bool] = True
    result_defs: ClassVar[tuple[fields.ResultDef, ...]] = ()
    result_index: ClassVar[dict[str, int]] = {}
    successor_defs: ClassVar[tuple[fields.Successor, ...]] = ()
    successor_index: ClassVar[dict[str, int]] = {}
    attr_defs: ClassVar[dict[str, fields.PropDef]] = {}
    normalized_attrs: ClassVar[tuple[tuple[str, fields.PropDef], ...]] = ()
    #: (fewest, most or None) operands the fields take
    operand_arity: ClassVar[tuple[int, int | None]] = (0, 0)
    #: operand segment sizes (one per operand def) where known exactly; see `operand_segments`
    segment_sizes: tuple[int, ...] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields.collect(cls)

    def __init__(
        self,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attrs: dict[str, Attribute] | None = None,
        regions: Sequence[Region] = (),
        loc: Location | None = None,
        result_names: Sequence[str | None] = (),
        successors: Sequence[Block] = (),
    ) -> None:
        self.operands: list[Value] = []
        for v in operands:
            self._add_operand(v)
        names = list(result_names) + [None] * (len(result_types) - len(result_names))
        self.results: list[OpResult] = [OpResult(t, self, i, n) for i, (t, n) in enumerate(zip(result_types, names))]
        self.attrs: dict[str, Attribute] = dict(attrs or {})
        self.regions: list[Region] = []
        for r in regions:
            r.parent = self
            self.regions.append(r)
        self.loc = loc
        self.parent: Block | None = None
        self.successors: list[Block] = list(successors)

    # -- declared structure -------------------------------------------------------------------------------------------

    def operand_segments(self) -> list[int]:
        """Operand count of each declared operand field: as read or built where known, else inferred."""
        n, defs, seg = len(self.operands), self.operand_defs, self.segment_sizes
        if seg is not None and len(seg) == len(defs) and sum(seg) == n:
            return list(seg)
        return fields.infer_segments(defs, n)

    def operand_group(self, field: str) -> list[Value]:
        """The operands of one declared operand field."""
        i = self.operand_index[field]
        if self.fixed_operands:
            return self.operands[i : i + 1]
        sizes = self.operand_segments()
        start = sum(sizes[:i])
        return self.operands[start : start + sizes[i]]

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        """Result types implied by the operand types of each field (and the attributes), where the op defines them;
        the reader uses this for syntax that does not spell results, `build` when no result type is given."""
        return None

    @classmethod
    def build(
        cls,
        *operands: Value | Sequence[Value] | None,
        result_types: Sequence[Type] | None = None,
        loc: Location | None = None,
        **props: Any,
    ) -> Op:
        """Build from operands in field order (a list for a variadic field, None for an absent optional one) and
        attributes by field name; result types are inferred where the op allows (`AddI.build(a, b)`)."""
        if len(operands) != len(cls.operand_defs):
            raise TypeError(f"{cls.__name__}.build takes {len(cls.operand_defs)} operand(s), got {len(operands)}")
        flat: list[Value] = []
        sizes: list[int] = []
        types: dict[str, list[Type]] = {}
        for d, v in zip(cls.operand_defs, operands):
            vals = [] if v is None else list(v) if isinstance(v, (list, tuple)) else [v]
            flat += vals
            sizes.append(len(vals))
            types[d.name] = [x.type for x in vals]
        op = cls(flat, (), loc=loc)
        for k, v in props.items():
            if not isinstance(getattr(cls, k, None), fields.PropDef):
                raise TypeError(f"{cls.__name__} has no attribute field {k!r}")
            setattr(op, k, v)
        if result_types is None:
            result_types = cls.infer_result_types(types, op.attrs)
            if result_types is None:
                raise TypeError(f"{cls.__name__}.build needs result_types (they do not follow from the operands)")
        op.results = [OpResult(t, op, i) for i, t in enumerate(result_types)]
        if not cls.fixed_operands:
            op.segment_sizes = tuple(sizes)
        return op

    @classmethod
    def parse_custom(cls, p: Any, st: Any) -> None:
        """Read the op's custom syntax after its name into the reader's op state (default: by `assembly_format`)."""
        p.format_of(cls).parse(p, st)

    def print_custom(self, w: Any) -> str | None:
        """The op's custom syntax after its name, or None for MLIR's generic form (default: by `assembly_format`)."""
        return w.format_of(type(self)).print(w, self)

    def verify_(self) -> None:
        """Op-specific checks (types, attributes, regions) beyond what the declared fields imply; raise
        `IRVerificationError(message, self)`. The verifier runs it after the generic checks of the fields."""

    @property
    def op_name(self) -> str:
        return self.name

    def _add_operand(self, v: Value) -> None:
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    def set_operand(self, i: int, v: Value) -> None:
        old = self.operands[i]
        old.uses.remove((self, i))
        self.operands[i] = v
        v.uses.append((self, i))

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    @property
    def result(self) -> OpResult:
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    def walk(self) -> Iterator[Op]:
        """Pre-order walk over this op and every op nested in its regions."""
        yield self
        for r in self.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    yield from op.walk()

    def parent_op(self) -> Op | None:
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    def erase(self) -> None:
        assert all(not r.uses for r in self.results), f"erasing {self.name} whose results are still used"
        self.drop_operands()
        if self.parent is not None:
            self.parent.remove(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


OP_CLASSES: dict[str, type[Op]] = {}


def register_op(cls: type[Op]) -> type[Op]:
    """Register an op class under its MLIR name (also how plugins add ops to the IR)."""
    if cls.name in OP_CLASSES and OP_CLASSES[cls.name] is not cls:
        raise ValueError(f"op {cls.name!r} is already registered as {OP_CLASSES[cls.name].__qualname__}")
    OP_CLASSES[cls.name] = cls
    return cls


class UnknownOp(Op):
    """An op the SDK has no class for; keeps its MLIR name per instance."""

    def __init__(self, op_name: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._op_name = op_name

    @property
    def op_name(self) -> str:  # type: ignore[override]
        return self._op_name


class IRVerificationError(ValueError):
    """The module is malformed; names the op (MLIR name) and its source location."""

    def __init__(self, message: str, op: Op | None = None) -> None:
        self.op = op
        self.message = message
        where = ""
        if op is not None:
            where = op.op_name + (f" at {op.loc}" if op.loc is not None else "") + ": "
        super().__init__(where + message)


class Module:
    """A TTIR module: a list of top-level ops (normally `tt.func`) and module attributes."""

    def __init__(
        self, ops: Sequence[Op] = (), attrs: dict[str, Attribute] | None = None, loc: Location | None = None
    ) -> None:
        self.body = Block()
        for op in ops:
            self.body.append(op)
        self.attrs: dict[str, Attribute] = dict(attrs or {})
        self.loc = loc

    @property
    def ops(self) -> list[Op]:
        return self.body.ops

    def walk(self) -> Iterator[Op]:
        for op in list(self.body.ops):
            yield from op.walk()
