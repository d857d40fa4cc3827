"""AxisInfo: per SSA value and per tensor dimension, what is known at compile time about its elements.

The facts are Triton's (lib/Analysis/AxisInfo.cpp), so a backend can vectorize what Triton's CUDA path vectorizes:

- contiguity[d]: along d the elements form runs of this many consecutive integers (runs start at multiples of it);
- divisibility[d]: the first element of every such run is a multiple of this power of two (bytes for pointers);
- constancy[d]: along d the elements form runs of this many equal values.

All three are powers of two. Scalars have rank 1 (shape [1]). Seeds: the kernel signature (`tt.divisibility` that
Triton 3.9 puts on pointers aligned to 16 bytes and integers divisible by 16; integers equal to 1 are constexprs and
never reach the IR), integer constants, `tt.make_range`, hints (`tt.contiguity`/`tt.divisibility`/`tt.constancy` on
ops, from `tl.max_contiguous`/`tl.multiple_of`, and those the integer-semantics pass carries onto its guarded
forms). Facts propagate forward in one pass; loop-carried values meet their initial and yielded facts until nothing
changes. Masked-off and overflowing elements are not modelled: an i32 offset is assumed not to wrap, and a divisor
not to be 0, as Triton assumes.

`analyze(func)` returns an `AxisInfoMap`; `info[value].contiguity[dim]` etc., and `info.text()` for golden tests.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from math import gcd

from ..ir import ops as O
from ..ir.attrs import DenseAttr, IntegerAttr
from ..ir.core import Block, Op, Value
from ..ir.enums import CmpIPredicate
from ..ir.types import FloatType, IntType, PointerType, Type

#: the divisibility of 0 (and the cap of every divisibility): Triton's highestPowOf2Divisor<int64_t>(0)
MAX_DIV = 1 << 62
#: rounds of a loop's fixed point before its carried values are given up as unknown
MAX_ROUNDS = 32


def pow2_divisor(x: int) -> int:
    """The largest power of two dividing `x` (MAX_DIV for 0)."""
    return MAX_DIV if x == 0 else min(x & -x, MAX_DIV)


def _mul_div(a: int, b: int) -> int:
    return MAX_DIV if a > MAX_DIV // b else a * b


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    #: the value of every element, where it is a known integer
    constant: int | None = None

    def __post_init__(self) -> None:
        # a dimension of unit contiguity makes every element a run start, so its divisibility holds everywhere
        glob = max((v for c, v in zip(self.contiguity, self.divisibility) if c == 1), default=1)
        if any(v < glob for v in self.divisibility):
            object.__setattr__(self, "divisibility", tuple(max(v, glob) for v in self.divisibility))

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int) -> AxisInfo:
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def of_constant(shape: tuple[int, ...], value: int) -> AxisInfo:
        d = pow2_divisor(value)
        return AxisInfo((1,) * len(shape), (d,) * len(shape), shape, value)

    def global_divisibility(self) -> int:
        return max((v for c, v in zip(self.contiguity, self.divisibility) if c == 1), default=1)

    def __str__(self) -> str:
        def f(xs: tuple[int, ...]) -> str:
            return "[" + ", ".join("max" if x >= MAX_DIV else str(x) for x in xs) + "]"

        s = f"contiguity={f(self.contiguity)} divisibility={f(self.divisibility)} constancy={f(self.constancy)}"
        return s if self.constant is None else f"{s} constant={self.constant}"


def _div_from_contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
    """Divisibility of a value that is `a` or `b` element-wise: when the runs differ in length, the start of a
    shorter run can lie inside a longer one."""
    ca, cb = a.contiguity[d], b.contiguity[d]
    if ca == cb or MAX_DIV in (ca, cb):
        return gcd(a.divisibility[d], b.divisibility[d])
    return gcd(a.divisibility[d], b.divisibility[d], ca, cb)


def join(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """What holds for a value that is either `a` or `b` (loop-carried values, branches, min/max)."""
    r = range(a.rank)
    return AxisInfo(
        tuple(gcd(a.contiguity[d], b.contiguity[d]) for d in r),
        tuple(_div_from_contiguity(a, b, d) for d in r),
        tuple(gcd(a.constancy[d], b.constancy[d]) for d in r),
        a.constant if a.constant is not None and a.constant == b.constant else None,
    )


def _shape(v: Value) -> tuple[int, ...]:
    return v.type.shape if v.type.is_tensor else (1,)


def _int_width(t: Type) -> int | None:
    e = t.element
    return e.width if isinstance(e, IntType) else None


def pointee_bytes(t: Type) -> int:
    """Bytes of one element a pointer (tile) `t` points at (a pointer's own pointee: 8)."""
    e = t.element
    assert isinstance(e, PointerType)
    p = e.pointee
    bits = p.width if isinstance(p, (IntType, FloatType)) else 64
    return max(1, bits // 8)


def _wrap(x: int, width: int) -> int:
    """`x` as a signed `width`-bit integer (TTIR integers are bit patterns; i1 true reads as -1 in MLIR, 1 here)."""
    if width == 1:
        return x & 1
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def _unsigned(x: int, width: int) -> int:
    return x & ((1 << width) - 1)


# ---- rules: one per op class; each gets the op and its operands' facts and returns the first result's facts ------

Rule = Callable[[Op, list[AxisInfo]], AxisInfo | None]
_RULES: dict[type, Rule] = {}


def _rule(*classes: type) -> Callable[[Rule], Rule]:
    def reg(f: Rule) -> Rule:
        for c in classes:
            _RULES[c] = f
        return f

    return reg


def _binary(
    op: Op,
    a: AxisInfo,
    b: AxisInfo,
    contig: Callable[[int], int] | None = None,
    div: Callable[[int], int] | None = None,
    const: Callable[[int], int] | None = None,
) -> AxisInfo:
    r = range(a.rank)
    return AxisInfo(
        tuple(contig(d) if contig else 1 for d in r),
        tuple(div(d) if div else 1 for d in r),
        tuple(const(d) if const else gcd(a.constancy[d], b.constancy[d]) for d in r),
    )


def _is_const_dim(x: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return x.constancy[d] == shape[d]


def _is_contig_dim(x: AxisInfo, shape: tuple[int, ...], d: int) -> bool:
    return x.contiguity[d] == shape[d]


@_rule(O.Constant)
def _constant(op: Op, _: list[AxisInfo]) -> AxisInfo | None:
    v = op.attrs.get("value")
    shape = _shape(op.result)
    if isinstance(v, IntegerAttr) and _int_width(op.result.type):
        return AxisInfo.of_constant(shape, _wrap(int(v.value), _int_width(op.result.type) or 64))
    if isinstance(v, DenseAttr) and v.is_splat:
        width = _int_width(op.result.type)
        if width:
            return AxisInfo.of_constant(shape, _wrap(int(v.values[0]), width))
        return AxisInfo((1,) * len(shape), (1,) * len(shape), shape)  # a float splat: constant, value unknown
    return None


@_rule(O.MakeRange)
def _make_range(op: O.MakeRange, _: list[AxisInfo]) -> AxisInfo:
    return AxisInfo((op.end - op.start,), (pow2_divisor(op.start),), (1,))


@_rule(O.Splat)
def _splat(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    shape = _shape(op.result)
    n = len(shape)
    return AxisInfo((1,) * n, (xs[0].divisibility[0],) * n, shape, xs[0].constant)


@_rule(O.Broadcast)
def _broadcast(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    src, out = _shape(op.operands[0]), _shape(op.result)
    x = xs[0]
    r = range(len(out))
    return AxisInfo(
        tuple(1 if src[d] == 1 else x.contiguity[d] for d in r),
        tuple(x.divisibility[d] for d in r),
        tuple(out[d] if src[d] == 1 else x.constancy[d] for d in r),
        x.constant,
    )


@_rule(O.ExpandDims)
def _expand_dims(op: O.ExpandDims, xs: list[AxisInfo]) -> AxisInfo:
    x = xs[0]
    if x.constant is not None:
        return AxisInfo.of_constant(_shape(op.result), x.constant)
    new = 0
    for c, v in zip(x.contiguity, x.divisibility):
        new = gcd(new, 1 if c > 1 else v)
    ax = op.axis

    def ins(t: tuple[int, ...], v: int) -> tuple[int, ...]:
        return t[:ax] + (v,) + t[ax:]

    return AxisInfo(ins(x.contiguity, 1), ins(x.divisibility, new or 1), ins(x.constancy, 1))


@_rule(O.Reshape)
def _reshape(op: Op, xs: list[AxisInfo]) -> AxisInfo | None:
    """Only the trivial reshapes: unit dimensions added or removed (the element order is unchanged)."""
    x = xs[0]
    out = _shape(op.result)
    if x.constant is not None:
        return AxisInfo.of_constant(out, x.constant)
    src = _shape(op.src)
    keep = [d for d, n in enumerate(src) if n != 1]
    if [src[d] for d in keep] != [n for n in out if n != 1]:
        return None
    g = x.global_divisibility()
    it = iter(keep)
    contig, div, const = [], [], []
    for n in out:
        if n == 1:
            contig.append(1), div.append(g), const.append(1)
        else:
            d = next(it)
            contig.append(x.contiguity[d]), div.append(x.divisibility[d]), const.append(x.constancy[d])
    return AxisInfo(tuple(contig), tuple(div), tuple(const))


@_rule(O.Trans)
def _trans(op: O.Trans, xs: list[AxisInfo]) -> AxisInfo:
    x = xs[0]
    order = op.order
    return AxisInfo(
        tuple(x.contiguity[d] for d in order),
        tuple(x.divisibility[d] for d in order),
        tuple(x.constancy[d] for d in order),
        x.constant,
    )


@_rule(O.ExtSI, O.ExtUI, O.TruncI, O.IndexCast, O.IndexCastUI)
def _int_cast(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    x = xs[0]
    c = x.constant
    if c is not None:
        src_w, dst_w = _int_width(op.operands[0].type), _int_width(op.result.type)
        if src_w and dst_w:
            c = _wrap(_unsigned(c, src_w) if isinstance(op, O.ExtUI) else c, dst_w)
        else:
            c = None
    return AxisInfo(x.contiguity, x.divisibility, x.constancy, c)


@_rule(O.TTBitcast)
def _bitcast(op: Op, xs: list[AxisInfo]) -> AxisInfo | None:
    x = xs[0]
    src = op.operands[0].type
    if not isinstance(src.element, PointerType):
        return None if _int_width(src) != _int_width(op.result.type) else x
    sb, db = pointee_bytes(src), pointee_bytes(op.result.type)
    if sb == db:
        return x
    div = tuple(gcd(v, sb) if c > 1 else v for c, v in zip(x.contiguity, x.divisibility))
    return AxisInfo((1,) * x.rank, div, x.constancy)


@_rule(O.AddI, O.SubI, O.AddPtr)
def _add_sub(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    sub = isinstance(op, O.SubI)
    elem = pointee_bytes(op.operands[0].type) if isinstance(op, O.AddPtr) else 1

    def contig(d: int) -> int:
        if sub:
            return gcd(a.contiguity[d], b.constancy[d])
        return max(gcd(a.constancy[d], b.contiguity[d]), gcd(a.contiguity[d], b.constancy[d]))

    def div(d: int) -> int:
        da, db = a.divisibility[d], _mul_div(b.divisibility[d], elem)
        ca, cb = a.contiguity[d], b.contiguity[d]
        if ca > 1 and cb > 1:
            if sub and ca == cb:
                return gcd(da, db)
            return 2 if da % 2 == 0 and db % 2 == 0 else 1
        if ca > 1 or cb > 1:
            return gcd(da, db, _mul_div(contig(d), elem))
        return gcd(da, db)

    info = _binary(op, a, b, contig, div)
    width = _int_width(op.result.type)
    if a.constant is not None and b.constant is not None and width and not isinstance(op, O.AddPtr):
        return AxisInfo.of_constant(
            _shape(op.result), _wrap(a.constant - b.constant if sub else a.constant + b.constant, width)
        )
    return info


@_rule(O.MulI)
def _mul(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    width = _int_width(op.result.type) or 64
    if a.constant is not None and b.constant is not None:
        return AxisInfo.of_constant(_shape(op.result), _wrap(a.constant * b.constant, width))

    def contig(d: int) -> int:
        return max(a.contiguity[d] if b.constant == 1 else 1, b.contiguity[d] if a.constant == 1 else 1)

    def div(d: int) -> int:
        da = 1 if a.contiguity[d] > 1 and b.constant != 1 else a.divisibility[d]
        db = 1 if b.contiguity[d] > 1 and a.constant != 1 else b.divisibility[d]
        return _mul_div(da, db)

    return _binary(op, a, b, contig, div)


@_rule(O.DivSI, O.DivUI)
def _div(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    shape = _shape(op.result)
    width = _int_width(op.result.type) or 64
    if a.constant is not None and b.constant is not None and b.constant != 0:
        if isinstance(op, O.DivSI):
            q = abs(a.constant) // abs(b.constant) * (1 if (a.constant < 0) == (b.constant < 0) else -1)
        else:
            q = _unsigned(a.constant, width) // _unsigned(b.constant, width)
        return AxisInfo.of_constant(shape, _wrap(q, width))

    def contig(d: int) -> int:
        return a.contiguity[d] if b.constant == 1 else 1

    def const(d: int) -> int:
        c = gcd(a.constancy[d], b.constancy[d])
        if op.result.type.is_tensor and _is_contig_dim(a, shape, d) and _is_const_dim(b, shape, d):
            c = max(c, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        return c

    def div(d: int) -> int:
        if a.constant == 0 or b.constant == 1:
            return a.divisibility[d]
        if b.constant is not None and a.contiguity[d] == 1:
            k = abs(b.constant) if isinstance(op, O.DivSI) else _unsigned(b.constant, width)
            if k > 0 and k & (k - 1) == 0:
                return max(1, a.divisibility[d] >> (k.bit_length() - 1))
        return 1

    return _binary(op, a, b, contig, div, const)


@_rule(O.RemSI, O.RemUI)
def _rem(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    shape = _shape(op.result)
    width = _int_width(op.result.type) or 64
    if b.constant == 1 or (isinstance(op, O.RemSI) and b.constant == -1):
        return AxisInfo.of_constant(shape, 0)
    if a.constant is not None and b.constant is not None and b.constant != 0:
        if isinstance(op, O.RemSI):
            r = abs(a.constant) % abs(b.constant) * (-1 if a.constant < 0 else 1)
        else:
            r = _unsigned(a.constant, width) % _unsigned(b.constant, width)
        return AxisInfo.of_constant(shape, _wrap(r, width))

    def contig(d: int) -> int:
        if op.result.type.is_tensor and _is_contig_dim(a, shape, d) and _is_const_dim(b, shape, d):
            return gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d])
        return 1

    def div(d: int) -> int:
        return gcd(a.divisibility[d], b.divisibility[d]) if b.constancy[d] > 1 else 1

    return _binary(op, a, b, contig, div)


_GT = (CmpIPredicate.SGT, CmpIPredicate.UGT)
_GE = (CmpIPredicate.SGE, CmpIPredicate.UGE)
_LT = (CmpIPredicate.SLT, CmpIPredicate.ULT)
_LE = (CmpIPredicate.SLE, CmpIPredicate.ULE)


@_rule(O.CmpI)
def _cmpi(op: O.CmpI, xs: list[AxisInfo]) -> AxisInfo | None:
    """`offs < n` is constant over runs of gcd(contiguity(offs), divisibility(offs), divisibility(n)) when n is the
    same everywhere: a run of consecutive integers starting at a multiple of that run length cannot straddle n."""
    if not op.result.type.is_tensor:
        return None
    a, b = xs
    shape = _shape(op.result)
    p = op.predicate

    def const(d: int) -> int:
        c = gcd(a.constancy[d], b.constancy[d])
        if p in _GT + _LE and _is_const_dim(a, shape, d):
            c = max(c, gcd(b.contiguity[d], a.divisibility[d], b.divisibility[d]))
        elif p in _LT + _GE and _is_const_dim(b, shape, d):
            c = max(c, gcd(a.contiguity[d], a.divisibility[d], b.divisibility[d]))
        return c

    return _binary(op, a, b, const=const)


@_rule(O.AndI, O.OrI, O.XOrI)
def _bitwise(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    width = _int_width(op.result.type)
    if a.constant is not None and b.constant is not None and width:
        f = {O.AndI: int.__and__, O.OrI: int.__or__, O.XOrI: int.__xor__}[type(op)]
        return AxisInfo.of_constant(_shape(op.result), _wrap(f(a.constant, b.constant), width))
    return _binary(op, a, b)


@_rule(O.ShLI)
def _shl(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    width = _int_width(op.result.type) or 64
    k = b.constant
    if a.constant is not None and k is not None:
        return AxisInfo.of_constant(_shape(op.result), _wrap(a.constant << k, width) if 0 <= k < width else 0)

    def contig(d: int) -> int:
        return a.contiguity[d] if k == 0 else 1

    def div(d: int) -> int:
        da = 1 if a.contiguity[d] > 1 and k != 0 else a.divisibility[d]
        if k is None:
            return da
        if not 0 <= k < width:
            return 1
        return _mul_div(da, 1 << min(k, 62))

    return _binary(op, a, b, contig, div)


@_rule(O.ShRSI, O.ShRUI)
def _shr(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    width = _int_width(op.result.type) or 64
    k = b.constant
    if a.constant is not None and k is not None and 0 <= k < width:
        x = a.constant if isinstance(op, O.ShRSI) else _unsigned(a.constant, width)
        return AxisInfo.of_constant(_shape(op.result), _wrap(x >> k, width))

    def contig(d: int) -> int:
        return a.contiguity[d] if k == 0 else 1

    def div(d: int) -> int:
        if k is None or not 0 <= k < width:
            return 1
        da = 1 if a.contiguity[d] > 1 and k != 0 else a.divisibility[d]
        return max(1, da >> k)

    return _binary(op, a, b, contig, div)


@_rule(O.MinSI, O.MaxSI, O.MinUI, O.MaxUI)
def _min_max(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    a, b = xs
    width = _int_width(op.result.type)
    if a.constant is not None and b.constant is not None and width:
        x, y = a.constant, b.constant
        if isinstance(op, (O.MinUI, O.MaxUI)):
            x, y = _unsigned(x, width), _unsigned(y, width)
        v = min(x, y) if isinstance(op, (O.MinSI, O.MinUI)) else max(x, y)
        return AxisInfo.of_constant(_shape(op.result), _wrap(v, width))
    return join(a, b)


@_rule(O.Select)
def _select(op: Op, xs: list[AxisInfo]) -> AxisInfo:
    c, a, b = xs
    if c.constant is not None:
        return b if c.constant == 0 else a
    if not op.operands[0].type.is_tensor:
        return join(a, b)
    r = range(a.rank)
    contig = tuple(gcd(a.contiguity[d], b.contiguity[d], c.constancy[d]) for d in r)
    return AxisInfo(
        contig,
        tuple(gcd(_div_from_contiguity(a, b, d), contig[d]) for d in r),
        tuple(gcd(a.constancy[d], b.constancy[d], c.constancy[d]) for d in r),
    )


@_rule(O.Load)
def _load(op: O.Load, xs: list[AxisInfo]) -> AxisInfo:
    """Equal over runs where the pointers and the mask are, and `other` too (a masked-off run reads it)."""
    p = xs[0]
    const = tuple(gcd(p.constancy[d], *(x.constancy[d] for x in xs[1:3])) for d in range(p.rank))
    return AxisInfo((1,) * p.rank, (1,) * p.rank, const)


def _elementwise(op: Op, xs: list[AxisInfo]) -> AxisInfo | None:
    """Any other pure elementwise op (float arithmetic, math functions, float compares, casts): equal wherever all
    its operands are; nothing known about its contiguity or divisibility."""
    rank = len(_shape(op.results[0]))
    if rank == 0 or not xs or any(x.rank != rank for x in xs):
        return None
    const = tuple(gcd(*(x.constancy[d] for x in xs)) for d in range(rank))
    return AxisInfo((1,) * rank, (1,) * rank, const)


# ---- the pass ----------------------------------------------------------------------------------------------------


def _hint(attr: object, rank: int) -> tuple[int, ...] | None:
    if isinstance(attr, IntegerAttr):
        return (int(attr.value),) * rank
    if isinstance(attr, DenseAttr):
        vals = tuple(int(v) for v in attr.values)
        vals = vals * rank if len(vals) == 1 else vals
        return vals if len(vals) == rank else None
    return None


#: the attributes that state a value's facts (contiguity, divisibility, constancy), one value per dimension
HINTS = ("tt.contiguity", "tt.divisibility", "tt.constancy")


def _with_hints(info: AxisInfo, get: Callable[[str], object]) -> AxisInfo:
    c, v, k = (
        _hint(get(name), info.rank) or have
        for name, have in zip(HINTS, (info.contiguity, info.divisibility, info.constancy))
    )
    if (c, v, k) == (info.contiguity, info.divisibility, info.constancy):
        return info
    return AxisInfo(c, v, k, info.constant)


def _rule_for(cls: type) -> Rule | None:
    for c in cls.__mro__:
        r = _RULES.get(c)
        if r is not None:
            return r
    return None


@dataclass
class AxisInfoMap:
    """The facts of every value of one function; values the pass did not reach read as unknown."""

    func: O.Func
    facts: dict[Value, AxisInfo] = field(default_factory=dict)

    def __getitem__(self, v: Value) -> AxisInfo:
        info = self.facts.get(v)
        return info if info is not None else AxisInfo.unknown(len(_shape(v)))

    def __contains__(self, v: Value) -> bool:
        return v in self.facts

    # ---- queries backends make ----------------------------------------------------------------------------

    def contiguity(self, v: Value, dim: int = -1) -> int:
        return self[v].contiguity[dim]

    def alignment(self, ptr: Value, dim: int = -1) -> int:
        """Bytes every run of `contiguity(ptr, dim)` pointers along `dim` is aligned to."""
        return self[ptr].divisibility[dim]

    def mask_constancy(self, mask: Value | None, dim: int = -1) -> int:
        """Length of the runs along `dim` over which `mask` is the same (the whole dimension when there is none)."""
        if mask is None:
            return MAX_DIV
        return self[mask].constancy[dim]

    def uniform(self, v: Value) -> bool:
        """Whether tensor `v` is proven the same at every index of its tile (constancy covering each dimension)."""
        shape = _shape(v)
        return bool(shape) and v in self.facts and all(c >= d for c, d in zip(self.facts[v].constancy, shape))

    def vector_run(self, ptr: Value, mask: Value | None, width: int, dim: int = -1) -> tuple[bool, bool, bool]:
        """For runs of `width` elements along `dim` (starting at multiples of `width`): whether their pointers are
        proven consecutive, whether their first pointer is proven aligned to `width` elements, and whether the mask
        is proven the same over each run."""
        info = self[ptr]
        elem = pointee_bytes(ptr.type)
        return (
            info.contiguity[dim] >= width,
            info.contiguity[dim] >= width and info.divisibility[dim] % (width * elem) == 0,
            self.mask_constancy(mask, dim) >= width,
        )

    def text(self) -> str:
        """One line per value in program order (`%name: facts`; unnamed values numbered in order, results of a
        multi-result op as `%name#i`), for golden tests."""
        lines, n = [], 0
        for v in _values(self.func):
            name = v.name
            if not name:
                name, n = str(n), n + 1
            if isinstance(v.owner, Op) and len(v.owner.results) > 1:
                name = f"{name}#{v.owner.results.index(v)}"
            lines.append(f"%{name}: {self[v]}")
        return "\n".join(lines)


def _values(func: O.Func) -> Iterator[Value]:
    def block(b: Block) -> Iterator[Value]:
        yield from b.args
        for op in b.ops:
            yield from op.results
            for r in op.regions:
                for bb in r.blocks:
                    yield from block(bb)

    for b in func.regions[0].blocks:
        yield from block(b)


class _Pass:
    def __init__(self, func: O.Func) -> None:
        self.func = func
        self.facts: dict[Value, AxisInfo] = {}

    def get(self, v: Value) -> AxisInfo:
        info = self.facts.get(v)
        return info if info is not None else AxisInfo.unknown(len(_shape(v)))

    def unknown(self, vs: list) -> None:
        for v in vs:
            self.facts[v] = AxisInfo.unknown(len(_shape(v)))

    def run(self) -> AxisInfoMap:
        blocks = self.func.regions[0].blocks
        for i, a in enumerate(blocks[0].args):
            base = AxisInfo.unknown(len(_shape(a)))
            self.facts[a] = _with_hints(base, lambda name, i=i: self.func.arg_attr(i, name))
        for b in blocks[1:]:
            self.unknown(b.args)
        for b in blocks:
            self.block(b)
        return AxisInfoMap(self.func, self.facts)

    def block(self, b: Block) -> None:
        for op in b.ops:
            self.op(op)

    def op(self, op: Op) -> None:
        if isinstance(op, O.For):
            self.loop(op)
        elif isinstance(op, O.If):
            self.branch(op)
        elif isinstance(op, O.While):
            self.while_loop(op)
        elif op.regions:
            for r in op.regions:
                for b in r.blocks:
                    self.unknown(b.args)
                    self.block(b)
            self.unknown(op.results)
        elif op.results:
            rule = _rule_for(type(op)) or (_elementwise if op.elementwise and op.pure else None)
            info = rule(op, [self.get(v) for v in op.operands]) if rule else None
            res = op.results[0]
            if info is None or info.rank != len(_shape(res)):
                info = AxisInfo.unknown(len(_shape(res)))
            self.facts[res] = _with_hints(info, op.attrs.get)
            self.unknown(op.results[1:])

    def _yielded(self, b: Block) -> list[AxisInfo]:
        t = b.terminator
        return [self.get(v) for v in t.operands] if t is not None and t.terminator else []

    def loop(self, op: O.For) -> None:
        lb, step = self.get(op.lower), self.get(op.step)
        body = op.body
        self.facts[body.args[0]] = AxisInfo((1,), (gcd(lb.divisibility[0], step.divisibility[0]),), (1,))
        carried = [self.get(v) for v in op.inits]
        for _ in range(MAX_ROUNDS):
            for a, info in zip(body.args[1:], carried):
                self.facts[a] = info
            self.block(body)
            new = [join(c, y) for c, y in zip(carried, self._yielded(body))]
            if new == carried:
                break
            carried = new
        else:
            carried = [AxisInfo.unknown(c.rank) for c in carried]
            for a, info in zip(body.args[1:], carried):
                self.facts[a] = info
            self.block(body)
        for r, info in zip(op.results, carried):
            self.facts[r] = info

    def branch(self, op: O.If) -> None:
        self.block(op.then_block)
        outs = self._yielded(op.then_block)
        if op.else_block is not None:
            self.block(op.else_block)
            outs = [join(a, b) for a, b in zip(outs, self._yielded(op.else_block))]
        if len(outs) != len(op.results):
            self.unknown(op.results)
            return
        for r, info in zip(op.results, outs):
            self.facts[r] = info

    def while_loop(self, op: O.While) -> None:
        before, after = op.before, op.after
        carried = [self.get(v) for v in op.operands]
        for _ in range(MAX_ROUNDS):
            for a, info in zip(before.args, carried):
                self.facts[a] = info
            self.block(before)
            fwd = self._yielded(before)[1:]
            for a, info in zip(after.args, fwd):
                self.facts[a] = info
            self.block(after)
            new = [join(c, y) for c, y in zip(carried, self._yielded(after))]
            if new == carried:
                break
            carried = new
        else:
            self.unknown(before.args)
            self.block(before)
            self.unknown(after.args)
            self.block(after)
            fwd = [AxisInfo.unknown(len(_shape(r))) for r in op.results]
        for r, info in zip(op.results, fwd):
            self.facts[r] = info


def analyze(func: O.Func) -> AxisInfoMap:
    """AxisInfo of every value of `func` (one forward pass; loops iterate to a fixed point)."""
    return _Pass(func).run()


_CACHE: weakref.WeakKeyDictionary[Op, AxisInfoMap] = weakref.WeakKeyDictionary()


def axis_info_of(op: Op) -> AxisInfoMap | None:
    """The facts of the function enclosing `op`, computed once per function (the IR must not change after the
    first query: backends ask while rendering, after every pass); None outside a function."""
    f: Op | None = op
    while f is not None and not isinstance(f, O.Func):
        f = f.parent_op()
    if f is None:
        return None
    info = _CACHE.get(f)
    if info is None:
        info = _CACHE[f] = analyze(f)
    return info


def proven_uniform(v: Value) -> bool:
    """Whether AxisInfo proves the op result `v` the same at every index: a backend can compute it once, where it is
    defined, as a scalar (Inductor's per-channel index `(x // HW) % C` inside one block, the loads and arithmetic
    built on it) instead of per element inside the element loop."""
    if not isinstance(v.owner, Op):
        return False
    info = axis_info_of(v.owner)
    return info is not None and info.uniform(v)
