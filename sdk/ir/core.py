"""Core structure of the SDK IR: values, operations, blocks, regions, modules and source locations.

The IR is SDK-owned Python (not MLIR bindings) so that vendors can write passes and lowering rules in plain Python
and so that every attribute (float constants included) is readable. One Python class per op kind; lowering tables
dispatch on those classes (see `ops.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

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
    """An operation. Subclasses fix `name` (the MLIR op name) and add typed accessors for operands and attributes.

    `attrs` maps MLIR attribute names to `Attribute`s, both inherent (`axis`, `predicate`, ...) and discardable ones.
    """

    name: ClassVar[str] = ""
    #: elementwise ops map each element of their tensor operands to the same element of the result
    elementwise: ClassVar[bool] = False
    #: ops whose result depends only on operands (no memory effects, no side effects)
    pure: ClassVar[bool] = False
    terminator: ClassVar[bool] = False

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
