"""Shrinking a failing kernel: first to the one case that fails (or, for a kernel-level failure, to a single case
that still reproduces it), then greedily replacing operations of its tree by an operand or a load of the same
dtype while the failure persists, within a time budget. Inputs keep their values (every input of the original
spec is still drawn, in the same order, from the same seed)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator

from .spec import Expr, KernelSpec, Node

Predicate = Callable[[KernelSpec], bool]


def with_exprs(spec: KernelSpec, exprs: list[Expr], tag: str) -> KernelSpec:
    s = copy.deepcopy(spec)
    s.exprs = copy.deepcopy(exprs)
    s.name = f"{spec.name.split('__')[0]}__{tag}"
    return s


def _paths(n: Node, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Node]]:
    yield path, n
    for i, a in enumerate(n.args):
        yield from _paths(a, path + (i,))


def _replace(n: Node, path: tuple[int, ...], new: Node) -> Node:
    if not path:
        return new
    m = copy.copy(n)
    m.args = list(n.args)
    m.args[path[0]] = _replace(n.args[path[0]], path[1:], new)
    return m


def _simpler(spec: KernelSpec, n: Node) -> list[Node]:
    """Replacements of `n` of its dtype, simplest first."""
    out: list[Node] = []
    if n.op in ("load", "lit", "index", "full"):
        return out
    loads = [i for i in spec.inputs if i.dtype == n.dtype]
    if loads:
        out.append(Node("load", n.dtype, attr={"name": loads[0].name}))
    out += [copy.deepcopy(a) for a in n.args if a.dtype == n.dtype and a.op != "lit"]
    for a in n.args:  # an operand's operand of the same dtype (through a cast, say)
        out += [copy.deepcopy(b) for b in a.args if b.dtype == n.dtype and b.op != "lit"]
    return out


def shrink_tree(spec: KernelSpec, still_fails: Predicate, deadline: float, max_tries: int = 60) -> KernelSpec:
    """Greedy: the first replacement (of any node, root's operands first) that keeps the failure is kept."""
    tries = 0
    improved = True
    while improved and tries < max_tries and time.monotonic() < deadline:
        improved = False
        e = spec.exprs[0]
        for path, n in list(_paths(e.node)):
            if not path and e.kind != "elementwise":
                continue  # a reduction, scan or dot root stays what it is
            for cand in _simpler(spec, n):
                if tries >= max_tries or time.monotonic() >= deadline:
                    return spec
                tries += 1
                trial = with_exprs(spec, [Expr(e.kind, _replace(e.node, path, cand), e.attr)], f"t{tries}")
                if still_fails(trial):
                    spec, improved = trial, True
                    break
            if improved:
                break
    return spec


def minimize(
    spec: KernelSpec, case: int | None, still_fails: Predicate, budget_s: float = 120.0
) -> tuple[KernelSpec, int | None]:
    """The smallest failing kernel found: (spec, index of the failing case in it: 0, or None if no single case
    reproduces a kernel-level failure and the whole kernel is kept)."""
    deadline = time.monotonic() + budget_s
    order = [case] if case is not None else list(range(len(spec.exprs)))
    for c in order:
        if time.monotonic() >= deadline:
            break
        one = with_exprs(spec, [spec.exprs[c]], f"c{c}")
        if still_fails(one):
            return shrink_tree(one, still_fails, deadline), 0
    return spec, case
