"""ACME's SDK IR pass: tensor division becomes multiplication by a reciprocal (ACME's divider is slow)."""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Module, Op
from triton_backend_sdk.ir.ops import ElementwiseOp, register_op
from triton_backend_sdk.pipeline import PassContext, ir_pass


@register_op
class Recip(ElementwiseOp):
    """`acme.recip`: 1 / x, elementwise (lowered by ACME's own rule in rules.py)."""

    name = "acme.recip"


@ir_pass(name="acme-recip-div")
class RecipDiv:
    """x / y on tensors of at least `min_elements` elements -> x * acme.recip(y)."""

    min_elements: int = 2

    def run(self, module: Module, ctx: PassContext) -> None:
        count = 0
        for op in list(module.walk()):
            t = op.results[0].type if op.results else None
            if not isinstance(op, O.DivF) or t is None or not t.is_tensor or _numel(t.shape) < self.min_elements:
                continue
            recip = Recip([op.rhs], [op.rhs.type], loc=op.loc)
            mul = O.MulF([op.lhs, recip.result], [t], loc=op.loc)
            _replace(op, [recip, mul])
            count += 1
        ctx.metadata["acme_recip_div"] = count


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _replace(op: Op, new: list[Op]) -> None:
    block = op.parent
    assert block is not None
    at = block.ops.index(op)
    for i, n in enumerate(new):
        block.insert(at + i, n)
    op.result.replace_all_uses_with(new[-1].result)
    op.erase()
