"""The `cf` dialect: unstructured control flow between the blocks of one region."""

from __future__ import annotations

from ..core import Op, register_op
from ..fields import Operand, StrProp, Successor, VarOperand


@register_op
class Br(Op):
    """`cf.br ^dest(%a, %b : T, U)`."""

    name = "cf.br"
    terminator = True
    dest = Successor()
    args = VarOperand()
    assembly_format = "$dest(`(`$args : type($args)`)`)? attr-dict"


@register_op
class CondBr(Op):
    """`cf.cond_br cond, ^a(args), ^b(args)`; `true_args`/`false_args` are the values each successor receives."""

    name = "cf.cond_br"
    terminator = True
    condition = Operand()
    true_args = VarOperand()
    false_args = VarOperand()
    true_dest = Successor()
    false_dest = Successor()
    assembly_format = (
        "$condition, $true_dest(`(`$true_args : type($true_args)`)`)?, "
        "$false_dest(`(`$false_args : type($false_args)`)`)? attr-dict"
    )


@register_op
class CfAssert(Op):
    name = "cf.assert"
    condition = Operand()
    message = StrProp(required=True)
    assembly_format = "$condition, $message attr-dict"
