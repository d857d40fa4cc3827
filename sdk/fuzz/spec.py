"""What a generated kernel is: its shape, inputs and expressions (one output each), as plain JSON-able data.

A `KernelSpec` is all a worker needs to rebuild the inputs and outputs of a kernel (the source is rendered from
it by `render.py`, and carries it as a literal, so a kernel file alone is a repro). An expression is a tree of
`Node`s; `Expr` is a root with the way it is stored:

- `elementwise`: a [BM, BN] (1-D: [BM]) tile stored under the bounds mask;
- `reduce`: `tl.sum/max/min/argmax/argmin` over an axis, stored per row (axis 1), per program and column (axis 0)
  or per program (1-D);
- `scan`: `tl.cumsum` along an axis, stored like an elementwise tile;
- `dot`: `tl.dot(A, tl.trans(B))` of two masked [BM, BN] tiles, a [BM, BM] result per program.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Node:
    """One operation: `op` names the kind (see render.py for each), `dtype` the result's dtype (`int1` for
    comparisons), `args` the operands, `attr` the op's parameters (a symbol, a function, a literal, an axis)."""

    op: str
    dtype: str
    args: list[Node] = field(default_factory=list)
    attr: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"op": self.op, "dtype": self.dtype}
        if self.args:
            d["args"] = [a.to_json() for a in self.args]
        if self.attr:
            d["attr"] = dict(self.attr)
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> Node:
        return Node(d["op"], d["dtype"], [Node.from_json(a) for a in d.get("args", [])], dict(d.get("attr", {})))

    def walk(self):
        yield self
        for a in self.args:
            yield from a.walk()

    def size(self) -> int:
        return sum(1 for _ in self.walk())


@dataclass
class Input:
    """A kernel input: a (M, N) (1-D: (M,)) tensor of `dtype` laid out by `layout` ("c" contiguous, "t"
    transposed storage, "p" padded rows, "s" every second element), its values drawn by `fill`, loaded with
    `mask` ("bounds" or "holes": the bounds and an index pattern) and `other` (None: no `other=`)."""

    name: str
    dtype: str
    layout: str = "c"
    fill: str = "mixed"
    mask: str = "bounds"
    other: float | int | None = None


@dataclass
class Expr:
    """One case: a root node and how it is stored (`kind`: elementwise, reduce, scan, dot)."""

    kind: str
    node: Node
    #: reductions and scans: the op (sum/max/min/argmax/argmin/cumsum) and axis; dots: the operand dtype
    attr: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "node": self.node.to_json(), "attr": dict(self.attr)}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Expr:
        return Expr(d["kind"], Node.from_json(d["node"]), dict(d.get("attr", {})))


@dataclass
class KernelSpec:
    name: str
    ndim: int
    M: int
    N: int
    BM: int
    BN: int
    grid: int
    inputs: list[Input]
    exprs: list[Expr]
    input_seed: int
    opt_level: int = 3

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["exprs"] = [e.to_json() for e in self.exprs]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> KernelSpec:
        d = dict(d)
        d["inputs"] = [Input(**i) for i in d["inputs"]]
        d["exprs"] = [Expr.from_json(e) for e in d["exprs"]]
        return KernelSpec(**d)

    def input(self, name: str) -> Input:
        return next(i for i in self.inputs if i.name == name)


def used_inputs(exprs: list[Expr]) -> set[str]:
    return {n.attr["name"] for e in exprs for n in e.node.walk() if n.op == "load"}
