"""Lowering-rule registry: one function per op class, looked up along the op's class hierarchy.

A rule registered for a family class (say `FloatUnaryOp`) covers every member that has no rule of its own. A missing
rule raises `LoweringError` naming the op, its dtype and the kernel's source line, with a repro hint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import LoweringError
from .ir.core import Op

Rule = Callable[..., Any]

REPRO_HINT = (
    "set TRITON_SDK_DUMP_DIR=<dir> and rerun to dump every stage, then "
    "`triton-sdk compile <dir>/<kernel>/02-sdkir.sdkir --backend {backend}`"
)


def op_dtype(op: Op) -> str:
    """The element type an op computes in (its first result's, else its first operand's), for error messages."""
    for v in (*op.results, *op.operands):
        return str(v.type.element)
    return "none"


class RuleTable:
    def __init__(self, backend: str, parent: RuleTable | None = None) -> None:
        self.backend = backend
        self.parent = parent
        self.rules: dict[type[Op], Rule] = {}

    def register(self, *op_classes: type[Op]) -> Callable[[Rule], Rule]:
        def deco(fn: Rule) -> Rule:
            for cls in op_classes:
                self.rules[cls] = fn
            return fn

        return deco

    def derive(self, backend: str) -> RuleTable:
        """A table for another backend that starts from this one's rules and may override or add to them."""
        return RuleTable(backend, parent=self)

    def find(self, op_cls: type[Op]) -> Rule | None:
        """A table rule for the class itself, else the rule a plugin's custom op carries for this table's backend
        (sdk/custom_ops.py), else a table rule for one of its families."""
        for depth, cls in enumerate(op_cls.__mro__):
            table: RuleTable | None = self
            while table is not None:
                rule = table.rules.get(cls)
                if rule is not None:
                    return rule
                table = table.parent
            if depth == 0 and getattr(op_cls, "lowerings", None):
                from .custom_ops import find_lowering

                rule = find_lowering(op_cls, self.backends())
                if rule is not None:
                    return rule
        return None

    def has_own(self, op_cls: type[Op]) -> bool:
        """Whether this table (or one it derives from) has a rule for `op_cls` itself, not only for a family of it:
        the backend renders that op natively, so shared legalizations leave it alone."""
        table: RuleTable | None = self
        while table is not None:
            if op_cls in table.rules:
                return True
            table = table.parent
        return False

    def backends(self) -> list[str]:
        """This table's backend, then the backends it derives from."""
        out, table = [], self
        while table is not None:
            out.append(table.backend)
            table = table.parent
        return out

    def lookup(self, op: Op) -> Rule:
        rule = self.find(type(op))
        if rule is None:
            raise LoweringError(self.backend, op.op_name, op_dtype(op), op.loc, REPRO_HINT.format(backend=self.backend))
        return rule
