"""A light structural verifier for the SDK IR, run after reading TTIR and after passes that rewrite it.

It catches what a pass or a hand-built module most often gets wrong, not everything MLIR's verifiers check:
- every operand is defined before its use: earlier in the same block, in an enclosing block before the enclosing op,
  or in a block of the same region that dominates the using block (`cf` control flow); never across `tt.func`;
- use lists agree with operand lists (so `replace_all_uses_with` stays correct);
- every block of a known op's region ends in a terminator, and terminators appear only last;
- what the op's class declares: operand, result and successor counts of its fields, required attributes and the
  kinds of its attribute fields (an enum as `EnumAttr`, ...), symbol references to functions of the module;
- then the class's own `verify_` (types, regions, yielded values).
"""

from __future__ import annotations

from .attrs import StringAttr
from .core import Block, BlockArgument, IRVerificationError, Module, Op, OpResult, Region, UnknownOp, Value
from .fields import OPTIONAL, SINGLE, VARIADIC, SymbolProp

__all__ = ["IRVerificationError", "verify"]


def _block_of(v: Value) -> Block | None:
    if isinstance(v, BlockArgument):
        return v.block
    if isinstance(v, OpResult):
        return v.op.parent
    return None


class _Verifier:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.index: dict[Op, int] = {}
        self.dominators: dict[Region, dict[Block, set[Block]]] = {}
        self.symbols = {a.value for op in module.ops if isinstance(a := op.attrs.get("sym_name"), StringAttr)}

    def run(self) -> None:
        for op in self.module.ops:
            self.number(op)
        for op in self.module.walk():
            self.check_op(op)

    def number(self, op: Op) -> None:
        for r in op.regions:
            for b in r.blocks:
                for i, o in enumerate(b.ops):
                    self.index[o] = i
                    self.number(o)

    # -- dominance ----------------------------------------------------------------------------------------------------

    def dom(self, region: Region) -> dict[Block, set[Block]]:
        """Dominator sets of a multi-block region (iterative data-flow; TTIR regions are tiny)."""
        cached = self.dominators.get(region)
        if cached is not None:
            return cached
        blocks = region.blocks
        preds: dict[Block, list[Block]] = {b: [] for b in blocks}
        for b in blocks:
            term = b.ops[-1] if b.ops else None
            for s in term.successors if term is not None else ():
                if s in preds:
                    preds[s].append(b)
        everything = set(blocks)
        dom = {b: set(everything) for b in blocks}
        dom[blocks[0]] = {blocks[0]}
        changed = True
        while changed:
            changed = False
            for b in blocks[1:]:
                new = set.intersection(*(dom[p] for p in preds[b])) if preds[b] else set()
                new = new | {b}
                if new != dom[b]:
                    dom[b] = new
                    changed = True
        self.dominators[region] = dom
        return dom

    def visible(self, v: Value, user: Op) -> bool:
        """Is `v` defined before `user` (in the block-structured sense described in the module docstring)?"""
        def_block = _block_of(v)
        if def_block is None:
            return False
        def_pos = -1 if isinstance(v, BlockArgument) else self.index.get(v.op, -1)  # type: ignore[attr-defined]
        op: Op | None = user
        while op is not None:
            block = op.parent
            if block is None:
                return False
            if block is def_block:
                return def_pos < self.index.get(op, -1) or isinstance(v, BlockArgument)
            region = block.parent
            if region is not None and def_block.parent is region and len(region.blocks) > 1:
                return def_block in self.dom(region).get(block, set())
            if op.isolated_from_above:
                return False  # isolated from above
            op = op.parent_op()
        return False

    # -- per-op checks ------------------------------------------------------------------------------------------------

    @staticmethod
    def fail(op: Op, message: str) -> IRVerificationError:
        return IRVerificationError(message, op)

    def check_op(self, op: Op) -> None:
        for i, v in enumerate(op.operands):
            if not self.visible(v, op):
                what = f"%{v.name}" if v.name else "a value"
                raise self.fail(op, f"operand #{i} ({what}: {v.type}) is not defined before this use")
            if (op, i) not in v.uses:
                raise self.fail(op, f"operand #{i} is missing from its value's use list")
        for r in op.results:
            for user, i in r.uses:
                if i >= len(user.operands) or user.operands[i] is not r:
                    raise self.fail(op, f"result #{r.index} has a stale use in {user.op_name}")
        if isinstance(op, UnknownOp):
            return
        for region in op.regions:
            for block in region.blocks:
                self.check_block(op, block)
        self.check_fields(op)
        op.verify_()

    def check_fields(self, op: Op) -> None:
        """Counts and attribute kinds the class declares."""
        n = len(op.operands)
        defs = op.operand_defs
        if defs:
            fixed, most = op.operand_arity
            if n < fixed or most is not None and n > most:
                names = ", ".join(d.name + {SINGLE: "", OPTIONAL: "?", VARIADIC: "*"}[d.kind] for d in defs)
                raise self.fail(op, f"has {n} operands, expected ({names})")
            seg = op.segment_sizes
            if seg is not None and (len(seg) != len(defs) or sum(seg) != n):
                raise self.fail(op, f"segment sizes {list(seg)} do not fit its {n} operands")
        rdefs = op.result_defs
        if rdefs and not any(d.kind == VARIADIC for d in rdefs) and len(op.results) != len(rdefs):
            raise self.fail(op, f"has {len(op.results)} results, expected {len(rdefs)}")
        if op.successor_defs and len(op.successors) != len(op.successor_defs):
            raise self.fail(op, f"has {len(op.successors)} successors, expected {len(op.successor_defs)}")
        for key, d in op.attr_defs.items():
            a = op.attrs.get(key)
            if a is None:
                if d.required:
                    raise self.fail(op, f"lacks its attribute {key!r}")
            elif d.accepts and not isinstance(a, d.accepts):
                raise self.fail(op, f"attribute {key!r} is {a!r}, not {' or '.join(c.__name__ for c in d.accepts)}")
            elif isinstance(d, SymbolProp) and a.name not in self.symbols:  # type: ignore[union-attr]
                raise self.fail(op, f"calls @{a.name}, which is not a function of this module")  # type: ignore[union-attr]

    def check_block(self, owner: Op, block: Block) -> None:
        for o in block.ops[:-1]:
            if o.terminator:
                raise self.fail(o, f"terminator in the middle of a block of {owner.op_name}")
        last = block.ops[-1] if block.ops else None
        if last is None or not (last.terminator or isinstance(last, UnknownOp)):
            raise self.fail(
                owner,
                "a block of its region does not end with a terminator"
                + (f" (ends with {last.op_name})" if last is not None else " (empty block)"),
            )


def verify(module: Module) -> None:
    """Raise `IRVerificationError` (naming the op and its location) if `module` is structurally malformed."""
    _Verifier(module).run()
