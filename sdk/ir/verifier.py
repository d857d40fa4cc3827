"""A light structural verifier for the SDK IR, run after reading TTIR and after passes that rewrite it.

It catches what a pass or a hand-built module most often gets wrong, not everything MLIR's verifiers check:
- every operand is defined before its use: earlier in the same block, in an enclosing block before the enclosing op,
  or in a block of the same region that dominates the using block (`cf` control flow); never across `tt.func`;
- use lists agree with operand lists (so `replace_all_uses_with` stays correct);
- every block of a known op's region ends in a terminator, and terminators appear only last;
- result/operand counts of ops with fixed arity, and the region shapes and yielded types of `scf.for`, `scf.if`,
  `scf.while`, `tt.reduce`, `tt.scan`, `tt.func`; `tt.call` targets exist.
"""

from __future__ import annotations

from .core import Block, BlockArgument, Module, Op, OpResult, Region, Value
from .ops import (
    Call,
    CondBr,
    Condition,
    For,
    Func,
    If,
    Reduce,
    ReduceReturn,
    Return,
    Scan,
    ScanReturn,
    UnknownOp,
    While,
    Yield,
)
from .types import IntType, Type

__all__ = ["IRVerificationError", "verify"]


class IRVerificationError(ValueError):
    """The module is malformed; names the op (MLIR name) and its source location."""

    def __init__(self, message: str, op: Op | None = None) -> None:
        self.op = op
        self.message = message
        where = ""
        if op is not None:
            where = op.op_name + (f" at {op.loc}" if op.loc is not None else "") + ": "
        super().__init__(where + message)


#: (min operands, max operands or None, number of results) of known fixed-arity ops
_ARITY: dict[str, tuple[int, int | None, int]] = {
    "tt.load": (1, 3, 1),
    "tt.store": (2, 3, 0),
    "tt.addptr": (2, 2, 1),
    "tt.splat": (1, 1, 1),
    "tt.broadcast": (1, 1, 1),
    "tt.expand_dims": (1, 1, 1),
    "tt.reshape": (1, 1, 1),
    "tt.trans": (1, 1, 1),
    "tt.join": (2, 2, 1),
    "tt.split": (1, 1, 2),
    "tt.cat": (2, 2, 1),
    "tt.gather": (2, 2, 1),
    "tt.histogram": (1, 2, 1),
    "tt.dot": (3, 3, 1),
    "tt.make_range": (0, 0, 1),
    "tt.get_program_id": (0, 0, 1),
    "tt.get_num_programs": (0, 0, 1),
    "tt.atomic_rmw": (2, 3, 1),
    "tt.atomic_cas": (3, 3, 1),
    "tt.clampf": (3, 3, 1),
    "tt.fp_to_fp": (1, 1, 1),
    "tt.bitcast": (1, 1, 1),
    "tt.int_to_ptr": (1, 1, 1),
    "tt.ptr_to_int": (1, 1, 1),
    "tt.assert": (1, 1, 0),
    "tt.print": (0, None, 0),
    "tt.return": (0, None, 0),
    "tt.descriptor_load": (1, None, 1),
    "tt.descriptor_store": (2, None, 0),
    "tt.make_tensor_descriptor": (3, None, 1),
    "arith.constant": (0, 0, 1),
    "arith.select": (3, 3, 1),
    "arith.cmpi": (2, 2, 1),
    "arith.cmpf": (2, 2, 1),
    "math.fma": (3, 3, 1),
}


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
        self.symbols = {op.sym_name for op in module.ops if isinstance(op, Func)}

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
            if isinstance(op, Func):
                return False  # isolated from above
            op = op.parent_op()
        return False

    # -- per-op checks ------------------------------------------------------------------------------------------------

    def fail(self, op: Op, message: str) -> IRVerificationError:
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
        arity = _ARITY.get(op.op_name)
        if arity is not None and not isinstance(op, UnknownOp):
            lo, hi, n_res = arity
            n = len(op.operands)
            if n < lo or hi is not None and n > hi:
                raise self.fail(op, f"has {n} operands, expected {lo}" + ("" if hi == lo else f"..{hi or 'n'}"))
            if len(op.results) != n_res:
                raise self.fail(op, f"has {len(op.results)} results, expected {n_res}")
        if op.op_name in ("arith.cmpi", "arith.cmpf") and op.results and op.results[0].type.element != IntType(1):
            raise self.fail(op, f"result type {op.results[0].type} is not i1-valued")
        if not isinstance(op, UnknownOp):
            for region in op.regions:
                for block in region.blocks:
                    self.check_block(op, block)
        checker = _SPECIFIC.get(type(op))
        if checker is not None:
            checker(self, op)

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

    def yields(self, op: Op, block: Block, cls: type[Op], types: list[Type], what: str) -> None:
        term = block.ops[-1] if block.ops else None
        if not isinstance(term, cls):
            raise self.fail(op, f"{what} must end with {cls.name}, not {term.op_name if term else 'nothing'}")
        got = [v.type for v in term.operands]
        if got != types:
            raise self.fail(
                term, f"yields ({', '.join(map(str, got))}) but {op.op_name} expects ({', '.join(map(str, types))})"
            )


def _results(op: Op) -> list[Type]:
    return [r.type for r in op.results]


def _check_for(v: _Verifier, op: Op) -> None:
    assert isinstance(op, For)
    if len(op.operands) < 3 or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        raise v.fail(op, "needs lower, upper, step and one single-block region")
    body = op.body
    inits = op.inits
    if len(op.results) != len(inits) or len(body.args) != 1 + len(inits):
        raise v.fail(op, f"{len(inits)} iter_args, {len(op.results)} results, {len(body.args)} body arguments")
    if [a.type for a in body.args[1:]] != [x.type for x in inits] or _results(op) != [x.type for x in inits]:
        raise v.fail(op, "iter_args, initial values and results disagree on types")
    v.yields(op, body, Yield, _results(op), "the loop body")


def _check_if(v: _Verifier, op: Op) -> None:
    assert isinstance(op, If)
    if len(op.operands) != 1 or len(op.regions) != 2 or not op.regions[0].blocks:
        raise v.fail(op, "needs a condition, a then region and an (optional) else region")
    v.yields(op, op.then_block, Yield, _results(op), "the then region")
    if op.else_block is not None:
        v.yields(op, op.else_block, Yield, _results(op), "the else region")
    elif op.results:
        raise v.fail(op, "has results but no else region")


def _check_while(v: _Verifier, op: Op) -> None:
    assert isinstance(op, While)
    if len(op.regions) != 2 or not op.regions[0].blocks or not op.regions[1].blocks:
        raise v.fail(op, "needs a before and an after region")
    before, after = op.before, op.after
    if [a.type for a in before.args] != [x.type for x in op.operands]:
        raise v.fail(op, "before-region arguments disagree with the initial values")
    cond = before.ops[-1] if before.ops else None
    if not isinstance(cond, Condition) or not cond.operands:
        raise v.fail(op, "the before region must end with scf.condition")
    if [x.type for x in cond.operands[1:]] != _results(op) or [a.type for a in after.args] != _results(op):
        raise v.fail(cond, "forwarded values disagree with the results / after-region arguments")
    v.yields(op, after, Yield, [x.type for x in op.operands], "the after region")


def _check_combine(ret: type[Op]) -> object:
    def check(v: _Verifier, op: Op) -> None:
        if len(op.regions) != 1 or not op.regions[0].blocks:
            raise v.fail(op, "needs a combine region")
        n = len(op.operands)
        combine = op.regions[0].blocks[0]
        if len(op.results) != n or len(combine.args) != 2 * n:
            raise v.fail(
                op,
                f"{n} operands, {len(op.results)} results, {len(combine.args)} combine arguments "
                f"(expected {n}, {2 * n})",
            )
        elems = [x.type.element for x in op.operands]
        v.yields(op, combine, ret, elems, "the combine region")

    return check


def _check_func(v: _Verifier, op: Op) -> None:
    assert isinstance(op, Func)
    ft = op.function_type
    if op.regions and op.regions[0].blocks:
        if [a.type for a in op.args] != list(ft.inputs):
            raise v.fail(op, "entry block arguments disagree with the function type")
        for block in op.regions[0].blocks:
            term = block.ops[-1] if block.ops else None
            if isinstance(term, Return) and [x.type for x in term.operands] != list(ft.results):
                raise v.fail(
                    term, f"returns ({', '.join(str(x.type) for x in term.operands)}) from a function of type {ft}"
                )


def _check_call(v: _Verifier, op: Op) -> None:
    assert isinstance(op, Call)
    if op.callee not in v.symbols:
        raise v.fail(op, f"calls @{op.callee}, which is not a function of this module")


def _check_cond_br(v: _Verifier, op: Op) -> None:
    if len(op.successors) != 2:
        raise v.fail(op, "needs two successors")


_SPECIFIC = {
    For: _check_for,
    If: _check_if,
    While: _check_while,
    Reduce: _check_combine(ReduceReturn),
    Scan: _check_combine(ScanReturn),
    Func: _check_func,
    Call: _check_call,
    CondBr: _check_cond_br,
}


def verify(module: Module) -> None:
    """Raise `IRVerificationError` (naming the op and its location) if `module` is structurally malformed."""
    _Verifier(module).run()
