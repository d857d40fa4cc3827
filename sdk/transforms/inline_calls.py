"""`tt.call` of a function that takes or returns tensors → the callee's body, inlined at the call.

`@triton.jit(noinline=True)` is a hint: a function boundary has no meaning of its own in Triton's semantics, and
Triton's frontend already refuses tensor arguments to such a function (a tensor result it allows, e.g. a helper that
loads a block). A backend's calling convention passes scalars; a tile has no one representation there (cpu_ref keeps
some as unevaluated expressions, opencl spreads them over work-items), so the call is inlined instead and the body
is then compiled with the caller's constants and masks in view. Calls whose arguments and results are all scalars
stay real calls.

A callee of several blocks (an early `return` makes `cf.cond_br`/`cf.br` between blocks that end in `tt.return`) is
made structured while it is copied: each conditional branch becomes an `scf.if` whose arms hold the code of the path
taken and yield the values returned, so the inlined body is one straight block wherever the call sits (inside a loop
too). A block reached along several paths is copied once per path (the branches are acyclic: Triton's loops are
`scf` ops). Inlining bottom-up (a callee's own calls first) copies every body once per call; a recursive function
with tensors is refused by name. Inlined functions nothing calls any more are removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.clone import clone_op
from ..ir.core import Block, Module, Region, Value
from ..pipeline import PassContext, ir_pass

#: block copies one inlined call may make when paths of an early-returning callee join again
MAX_BLOCK_COPIES = 256


def passes_tensors(func: O.Func) -> bool:
    """Whether a call of `func` moves a tensor across the call boundary."""
    ft = func.function_type
    return any(t.is_tensor for t in (*ft.inputs, *ft.results))


class _Structurizer:
    """Copies a callee's blocks, from its entry, into one block: branches become `scf.if`, returns its results."""

    def __init__(self, callee: O.Func, call: O.Call) -> None:
        self.callee = callee
        self.call = call
        self.result_types = list(callee.function_type.results)
        self.copies = 0
        self.on_path: set[Block] = set()

    def path(self, block: Block, args: Sequence[Value], values: dict[Value, Value], into: Block) -> list[Value]:
        """Append the code of every path from `block` to `into`; returns the values the paths return."""
        if block in self.on_path:
            raise UnsupportedError(
                "sdk", f"inlining @{self.callee.sym_name}: its blocks branch in a cycle", self.call.loc
            )
        self.copies += 1
        if self.copies > MAX_BLOCK_COPIES:
            raise UnsupportedError(
                "sdk",
                f"inlining @{self.callee.sym_name}: its branches join along more than {MAX_BLOCK_COPIES} paths",
                self.call.loc,
            )
        values = dict(values)
        values.update(zip(block.args, args))
        for op in block.ops[:-1]:
            into.append(clone_op(op, values))
        term = block.ops[-1] if block.ops else None
        self.on_path.add(block)
        try:
            return self._terminator(term, values, into)
        finally:
            self.on_path.discard(block)

    def _terminator(self, term: O.Op | None, values: dict[Value, Value], into: Block) -> list[Value]:
        def mapped(vs: Sequence[Value]) -> list[Value]:
            return [values.get(v, v) for v in vs]

        if isinstance(term, O.Return):
            return mapped(term.operands)
        if isinstance(term, O.Br):
            return self.path(term.dest, mapped(term.args), values, into)
        if isinstance(term, O.CondBr):
            arms = [Region([Block()]), Region([Block()])]
            branch = O.If(mapped([term.condition]), self.result_types, regions=arms, loc=term.loc)
            for dest, dest_args, arm in (
                (term.true_dest, term.true_args, arms[0]),
                (term.false_dest, term.false_args, arms[1]),
            ):
                returned = self.path(dest, mapped(dest_args), values, arm.entry)
                arm.entry.append(O.Yield(returned, loc=term.loc))
            into.append(branch)
            return list(branch.results)
        what = term.op_name if term is not None else "no terminator"
        raise UnsupportedError("sdk", f"inlining @{self.callee.sym_name}: a block ending in {what}", self.call.loc)


def inline_call(call: O.Call, callee: O.Func) -> None:
    """Replace `call` by a copy of `callee`'s body, its arguments bound to the call's operands."""
    if not callee.regions or not callee.regions[0].blocks:
        raise UnsupportedError("sdk", f"inlining @{callee.sym_name}: the function has no body", call.loc)
    staging = Block()
    returned = _Structurizer(callee, call).path(callee.body, list(call.operands), {}, staging)
    block = call.parent
    assert block is not None
    at = block.ops.index(call)
    for i, op in enumerate(staging.ops):
        block.insert(at + i, op)
    for r, v in zip(call.results, returned):
        if r.name and not any(v is a for a in call.operands):
            v.name = r.name  # the caller's name for the result reads better in dumps than the callee's
        r.replace_all_uses_with(v)
    call.erase()


@ir_pass("inline-tensor-calls")
class InlineTensorCalls:
    """Inlines every `tt.call` of a function that takes or returns a tensor (see the module docstring)."""

    def run(self, module: Module, ctx: PassContext) -> None:
        funcs = {f.sym_name: f for f in module.ops if isinstance(f, O.Func)}
        done: set[str] = set()
        active: list[str] = []
        inlined: set[str] = set()

        def visit(func: O.Func) -> None:
            active.append(func.sym_name)
            for call in [op for op in func.walk() if isinstance(op, O.Call)]:
                callee = funcs.get(call.callee)
                if callee is None:
                    continue  # the backend names the unknown function
                tensors = passes_tensors(callee)
                if callee.sym_name in active:
                    if tensors:
                        chain = " -> ".join(f"@{n}" for n in (*active, callee.sym_name))
                        raise UnsupportedError("sdk", f"recursive call of a function with tensors ({chain})", call.loc)
                    continue  # scalar recursion stays a real call
                if callee.sym_name not in done:
                    visit(callee)
                if tensors:
                    inline_call(call, callee)
                    inlined.add(callee.sym_name)
            active.pop()
            done.add(func.sym_name)

        for func in sorted(funcs.values(), key=lambda f: not f.is_public):  # the kernel first: errors name its chain
            if func.sym_name not in done:
                visit(func)
        reachable = _reachable(funcs)
        for name in inlined - reachable:
            if not funcs[name].is_public:
                module.body.remove(funcs[name])


def _reachable(funcs: dict[str, O.Func]) -> set[str]:
    """Functions called, directly or not, from a public one (the kernel)."""
    seen = {name for name, f in funcs.items() if f.is_public}
    work = list(seen)
    while work:
        for op in funcs[work.pop()].walk():
            if isinstance(op, O.Call) and op.callee in funcs and op.callee not in seen:
                seen.add(op.callee)
                work.append(op.callee)
    return seen
