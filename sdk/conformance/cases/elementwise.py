"""arith integer and float binary ops, comparisons, select and unary ops, over every dtype they accept."""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import FLOATS, INTS, NUMERIC, SIGNED, TORCH, bits, c_divmod, full_range, np_of, rand, select
from .tolerance import EXACT, ulp

BLOCK = 256
SHAPES_1D = ((1,), (1000,), (4099,))


@triton.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "truediv":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "and":
        z = x & y
    elif OP == "or":
        z = x | y
    elif OP == "xor":
        z = x ^ y
    elif OP == "shl":
        z = x << y
    elif OP == "shr":
        z = x >> y
    elif OP == "minimum":
        z = tl.minimum(x, y)
    elif OP == "maximum":
        z = tl.maximum(x, y)
    elif OP == "lt":
        z = x < y
    elif OP == "le":
        z = x <= y
    elif OP == "gt":
        z = x > y
    elif OP == "ge":
        z = x >= y
    elif OP == "eq":
        z = x == y
    elif OP == "ne":
        z = x != y
    elif OP == "umulhi":
        z = tl.umulhi(x, y)
    else:
        tl.static_assert(False, "unknown op")
    tl.store(out_ptr + offs, z, mask=mask)


def _np_binary(op: str, a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        if op in ("add", "sub", "mul", "and", "or", "xor"):
            return {
                "add": np.add,
                "sub": np.subtract,
                "mul": np.multiply,
                "and": np.bitwise_and,
                "or": np.bitwise_or,
                "xor": np.bitwise_xor,
            }[op](a, b)
        if op == "floordiv":
            return c_divmod(a, b)[0]
        if op == "mod":
            return c_divmod(a, b)[1]
        if op == "shl":
            return np.left_shift(a, b.astype(a.dtype))
        if op == "shr":
            return np.right_shift(a, b.astype(a.dtype))
        if op == "minimum":
            return np.minimum(a, b)
        if op == "maximum":
            return np.maximum(a, b)
        if op == "umulhi":
            w = bits(dtype)
            m = (1 << w) - 1
            prod = [((int(x) & m) * (int(y) & m)) >> w for x, y in zip(a.ravel(), b.ravel())]
            return np.array(prod, dtype=np.uint64).astype(a.dtype).reshape(a.shape)
    raise KeyError(op)


_CMP = {"lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne}
_FLOAT_BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "truediv": torch.div,
    "mod": torch.fmod,
    "minimum": torch.minimum,
    "maximum": torch.maximum,
}


#: the TTIR op(s) each Python operator becomes (integer / float spellings)
TTIR = {
    "add": "arith.addi|addf",
    "sub": "arith.subi|subf",
    "mul": "arith.muli|mulf",
    "truediv": "arith.divf",
    "floordiv": "arith.divsi|divui",
    "mod": "arith.remsi|remui|remf",
    "and": "arith.andi",
    "or": "arith.ori",
    "xor": "arith.xori",
    "shl": "arith.shli",
    "shr": "arith.shrsi|shrui",
    "minimum": "arith.minsi|minui|minnumf",
    "maximum": "arith.maxsi|maxui|maxnumf",
    "umulhi": "tt.mulhiui",
    "neg": "arith.subi|negf",
    "abs": "math.absi|absf",
    "invert": "arith.xori",
}
TTIR.update(dict.fromkeys(("lt", "le", "gt", "ge", "eq", "ne"), "arith.cmpi|cmpf"))


def _binary_case(op: str, dtypes: tuple[str, ...], inputs: str = "small", tol=EXACT) -> Case:
    out_bool = op in _CMP

    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        n = shape[0]
        if inputs == "full" and dtype in INTS:
            x, y = full_range(shape, dtype, g), full_range(shape, dtype, g)
        elif inputs == "shift":
            x = full_range(shape, dtype, g)
            y = torch.randint(0, bits(dtype), shape, generator=g).to(TORCH[dtype])
        else:
            x, y = rand(shape, dtype, g, 1, 100), rand(shape, dtype, g, 1, 100)
        if out_bool:  # make some pairs equal
            y = select(torch.rand(shape, generator=g) < 0.3, x, y)
        out = torch.empty(shape, dtype=torch.bool if out_bool else TORCH[dtype])
        return Launch([x, y, out, n], (triton.cdiv(n, BLOCK),), (2,), {"OP": op, "BLOCK": BLOCK})

    def reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
        x, y = launch.args[0], launch.args[1]
        if out_bool:
            if dtype in INTS:
                return [
                    torch.from_numpy(
                        {
                            "lt": np.less,
                            "le": np.less_equal,
                            "gt": np.greater,
                            "ge": np.greater_equal,
                            "eq": np.equal,
                            "ne": np.not_equal,
                        }[op](np_of(x), np_of(y))
                    )
                ]
            return [_CMP[op](x.double(), y.double())]
        if dtype in INTS:
            return [torch.from_numpy(_np_binary(op, np_of(x), np_of(y), dtype))]
        return [_FLOAT_BINARY[op](x.double(), y.double())]

    return register(
        Case(f"binary_{op}", TTIR[op], binary_kernel, dtypes, SHAPES_1D, build, reference, tol, interpreter=True)
    )


for _op in ("add", "sub", "mul"):
    _binary_case(_op, NUMERIC, "full", lambda d: EXACT if d in INTS else ulp(0.5001))
_binary_case("truediv", FLOATS, tol=ulp(0.5001))
_binary_case("floordiv", INTS)
_binary_case("mod", INTS + ("float32", "float64"), tol=lambda d: EXACT if d in INTS else ulp(0))
for _op in ("and", "or", "xor"):
    _binary_case(_op, INTS, "full")
for _op in ("shl", "shr"):
    _binary_case(_op, INTS, "shift")
for _op in ("minimum", "maximum"):
    _binary_case(_op, NUMERIC, "full", lambda d: EXACT if d in INTS else ulp(0))
for _op in _CMP:
    _binary_case(_op, NUMERIC + ("bool",))
_binary_case("umulhi", ("int32", "uint32", "int64", "uint64"), "full")


@triton.jit
def unary_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OP == "neg":
        z = -x
    elif OP == "abs":
        z = tl.abs(x)
    elif OP == "invert":
        z = ~x
    elif OP == "not":
        z = not x
    else:
        tl.static_assert(False, "unknown op")
    tl.store(out_ptr + offs, z, mask=mask)


def _unary_case(op: str, dtypes: tuple[str, ...]) -> Case:
    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        x = full_range(shape, dtype, g) if dtype in INTS else rand(shape, dtype, g)
        return Launch(
            [x, torch.empty_like(x), shape[0]], (triton.cdiv(shape[0], BLOCK),), (1,), {"OP": op, "BLOCK": BLOCK}
        )

    def reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
        x = launch.args[0]
        if dtype == "bool":
            return [~x]
        if dtype in INTS:
            a = np_of(x)
            with np.errstate(over="ignore"):
                r = {"neg": lambda: -a, "abs": lambda: np.where(a < 0, -a, a), "invert": lambda: ~a}[op]()
            return [torch.from_numpy(np.asarray(r, dtype=a.dtype))]
        return [{"neg": torch.neg, "abs": torch.abs}[op](x.double())]

    return register(Case(f"unary_{op}", TTIR[op], unary_kernel, dtypes, SHAPES_1D, build, reference, EXACT))


_unary_case("neg", SIGNED + FLOATS)
_unary_case("abs", NUMERIC)
_unary_case("invert", INTS)


@triton.jit
def where_kernel(c_ptr, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = tl.load(c_ptr + offs, mask=mask, other=False)
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(c, x, y), mask=mask)


def _where_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    c = torch.rand(shape, generator=g) < 0.5
    x, y = rand(shape, dtype, g), rand(shape, dtype, g)
    return Launch([c, x, y, torch.empty_like(x), shape[0]], (triton.cdiv(shape[0], BLOCK),), (3,), {"BLOCK": BLOCK})


register(
    Case(
        "where",
        "arith.select",
        where_kernel,
        NUMERIC + ("bool",),
        SHAPES_1D,
        _where_build,
        lambda launch, d: [select(launch.args[0], launch.args[1], launch.args[2])],
        EXACT,
    )
)
