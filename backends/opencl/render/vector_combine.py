"""Reduction combines the C-style language spells on whole vectors, for lane partials held in vector variables
(row_walk.py): a combine region that is exactly `return op(a, b)` of one of these classes, on a type whose C
vector arithmetic is the scalar op lane by lane (fp32 and fp64 without the rounding a narrower float needs; integer
bitwise ops and signed min/max, which do not overflow); or, on fp32/fp64, a small region of comparisons, boolean
ops and selects such as Inductor's NaN-propagating max (`select((a > b) | (a != a), a, b)`): OpenCL C compares
vectors lane by lane into -1/0 masks, combines them with its logical and bitwise operators and selects by `?:`."""

from __future__ import annotations

from collections.abc import Callable

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.dialects.tt import combine_body
from triton_backend_sdk.ir.enums import CmpFPredicate

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
_VECTOR_CTYPES = frozenset().union(*(ctypes for _, ctypes in _TABLES))

#: the widest vector the language has (OpenCL C: 16 components)
MAX_COMPONENTS = 16


#: the ops a float combine region may be built from beyond a single op, and at most this many of them
_REGION_OPS = (O.CmpF, O.OrI, O.AndI, O.XOrI, O.Select, *_FLOAT)
MAX_REGION_OPS = 8


def vector_combine(op: O.Reduce, ctypes: list[str]) -> VectorCombine | None:
    """The vector form of `op`'s combine on one operand of C type ctypes[0], or None."""
    if len(ctypes) != 1:
        return None
    body = op.single_op
    if body is None:
        return _region(op) if ctypes[0] in _TABLES[0][1] else None
    for table, ctype_set in _TABLES:
        if type(body) in table and ctypes[0] in ctype_set:
            return table[type(body)]
    return None


def _region(op: O.Reduce) -> VectorCombine | None:
    """A float combine region of _REGION_OPS returning one value, as one C expression over the two vectors."""
    block = op.combine
    body = combine_body(block, MAX_REGION_OPS)
    if body is None:
        return None
    for x in body:
        if not isinstance(x, _REGION_OPS):
            return None
        if isinstance(x, O.CmpF) and x.predicate in (CmpFPredicate.TRUE, CmpFPredicate.FALSE):
            return None
    ret = block.ops[-1]

    def combine(lang: CStyleLanguage, a: str, b: str) -> str:
        env = {id(block.args[0]): a, id(block.args[1]): b}
        for x in body:
            args = [env[id(v)] for v in x.operands]
            env[id(x.results[0])] = _expr(lang, x, args)
        return env[id(ret.operands[0])]

    return combine


def _expr(lang: CStyleLanguage, x: O.Op, args: list[str]) -> str:
    if isinstance(x, O.CmpF):
        pattern = x.predicate.c_pattern
        isnan = lang.function("isnan") if "{isnan}" in pattern else ""
        return pattern.format(a=args[0], b=args[1], isnan=isnan)
    if isinstance(x, O.Select):
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if isinstance(x, (O.OrI, O.AndI, O.XOrI)):
        return _INT[type(x)](lang, *args)
    return _FLOAT[type(x)](lang, *args)


def vector_width(ctx: RenderContext, ctypes: list[str], p: int) -> int:
    """Components per vector partial for `p` lane partials of ctypes[0] (the descriptor's vector width, at most
    MAX_COMPONENTS, dividing p), or 0 where partials are not held in vectors (several operands, one lane)."""
    if len(ctypes) != 1 or ctypes[0] not in _VECTOR_CTYPES:
        return 0
    w = min(MAX_COMPONENTS, ctx.vector_bits // (8 * CT.size_of(ctypes[0])))
    return w if w >= 2 and p % w == 0 else 0
