"""`sdk.*` math ops: variants of `math` ops that only the SDK's legalizations create and only backends with a rule of
their own see. Triton's parser does not know them; they print as their `math` twins do, under their own name."""

from __future__ import annotations

from ..core import register_op
from .math import Exp


@register_op
class PreciseExp(Exp):
    """An exp the kernel asked for at the math library's accuracy (libdevice `__nv_exp[f]`, the SDK's own
    expansions), where a plain `math.exp` (`tl.exp`) may be approximated as Triton's CUDA path does (`ex2.approx`).
    Only backends with a rule of their own for it see it: the math-library pass makes it a `math.exp` elsewhere."""

    name = "sdk.precise_exp"


__all__ = ["PreciseExp"]
