"""Reduction combines the C-style language spells on whole vectors, for lane partials held in vector variables
(row_walk.py): a combine region that is exactly `return op(a, b)` of one of these classes, on a type whose C
vector arithmetic is the scalar op lane by lane (fp32 and fp64 without the rounding a narrower float needs; integer
bitwise ops and signed min/max, which do not overflow)."""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.ir import ops as O

from . import ctypes as CT
from .context import RenderContext
from .language import CStyleLanguage

#: `f(language, a, b)`: the vector combine of vectors a and b
VectorCombine = Callable[[CStyleLanguage, str, str], str]


def _infix(sym: str) -> VectorCombine:
    return lambda lang, a, b: f"({a} {sym} {b})"


def _call(fn: str) -> VectorCombine:
    return lambda lang, a, b: lang.call(fn, a, b)


_FLOAT: dict[type, VectorCombine] = {
    O.AddF: _infix("+"),
    O.MulF: _infix("*"),
    O.MaxNumF: _call("fmax"),
    O.MinNumF: _call("fmin"),
}
_INT: dict[type, VectorCombine] = {
    O.AndI: _infix("&"),
    O.OrI: _infix("|"),
    O.XOrI: _infix("^"),
    O.MaxSI: _call("max"),
    O.MinSI: _call("min"),
}
#: the C types each table applies to
_TABLES = ((_FLOAT, frozenset({"float", "double"})), (_INT, frozenset({"int", "long"})))

#: the widest vector the language has (OpenCL C: 16 components)
MAX_COMPONENTS = 16


def vector_combine(op: O.Reduce, ctypes: list[str]) -> VectorCombine | None:
    """The vector form of `op`'s combine on one operand of C type ctypes[0], or None."""
    body = op.single_op
    if len(ctypes) != 1 or body is None:
        return None
    for table, ctype_set in _TABLES:
        if type(body) in table and ctypes[0] in ctype_set:
            return table[type(body)]
    return None


def vector_width(ctx: RenderContext, ctypes: list[str], p: int) -> int:
    """Components per vector partial for `p` lane partials of ctypes[0] (the descriptor's vector width, at most
    MAX_COMPONENTS, dividing p), or 0 where partials are not held in vectors (several operands, one lane)."""
    if len(ctypes) != 1 or ctypes[0] not in {"float", "double", "int", "long"}:
        return 0
    w = min(MAX_COMPONENTS, ctx.vector_bits // (8 * CT.size_of(ctypes[0])))
    return w if w >= 2 and p % w == 0 else 0
