"""The random kernel generator: a seeded, type-directed builder of expression trees (no hypothesis: a kernel is
rebuilt from (seed, index) alone, and minimize.py shrinks it with knowledge of what a kernel is).

Every operand of an operation has the dtype the operation computes in (a child of another dtype is cast
explicitly), so the generator's type rules are Triton's without its implicit promotions: a binary op on two T's
is a T (`/` and float `%` compute in f32, f64 in f64), a comparison an int1, a reduction's result is cast back to
the node's dtype. Python literals appear as the second (or first) operand of a binary op, of the same kind as the
tensor (nonnegative for unsigned), so that Triton's scalar promotion leaves the tensor's dtype alone.

Only constructs with one defined result are generated: NaNs never reach argmax/argmin (replaced by 0), a float is
bitcast to an integer only where its bits cannot depend on NaN propagation (loads, selects, negations of them),
every reduction, scan and dot reads its masked-off lanes as 0 (`tl.where(mask, x, 0)`), and loads with a partial
mask always have an `other=`.
"""

from __future__ import annotations

import random

from . import dtypes as D
from .spec import Expr, Input, KernelSpec, Node

#: how often each dtype is a root's or an operand's dtype
DTYPE_WEIGHTS = {
    "float32": 10,
    "float16": 4,
    "bfloat16": 4,
    "float64": 2,
    "float8e4nv": 2,
    "float8e5": 2,
    "int32": 6,
    "int8": 3,
    "int16": 2,
    "int64": 3,
    "uint8": 3,
    "uint16": 2,
    "uint32": 3,
    "uint64": 2,
}
#: functions of tl.math applied to f32/f64 (sqrt_rn: f32 only); floor/ceil are exact, the others approximate
MATH_FNS = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "erf", "floor", "ceil", "sqrt_rn")
APPROX_FNS = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "erf")
INT_SYMS = ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^")
FLOAT_SYMS = ("+", "-", "*")
CMP_SYMS = ("<", "<=", ">", ">=", "==", "!=")
REDUCE_OPS = ("sum", "max", "min", "argmax", "argmin")
DOT_DTYPES = ("float16", "bfloat16", "float32", "int8", "float8e4nv", "float8e5")
STD_FLOATS = ("float16", "bfloat16", "float32", "float64")
MAX_INPUTS = 6


def reduce_dtype(op: str, src: str) -> str:
    """The dtype Triton's tl.sum/max/min/argmax/cumsum return for an operand of dtype `src`."""
    if op in ("argmax", "argmin"):
        return "int32"
    if op in ("sum", "cumsum"):
        if D.is_int(src) and D.bits(src) < 32:
            return "int32" if D.is_signed(src) else "uint32"
        return src
    if D.bits(src) < 32:  # max/min widen narrow operands
        return "float32" if D.is_float(src) else "int32"
    return src


def dot_acc(src: str) -> str:
    return "int32" if src == "int8" else "float32"


def can_cast(src: str, dst: str) -> bool:
    """Whether Triton's `.to()` converts `src` to `dst` in one step (fp8 <-> int goes through f32)."""
    if src == dst:
        return False
    fp8 = src in D.FP8 or dst in D.FP8
    other = dst if src in D.FP8 else src
    return not (fp8 and (D.is_int(other) or other == D.BOOL))


def bit_pure(n: Node) -> bool:
    """Whether a float node's bits are defined exactly (no NaN payload or sign choice of an implementation)."""
    if not D.is_float(n.dtype):
        return True
    if n.op in ("load", "bitcast"):
        return True
    if n.op == "where":
        return bit_pure(n.args[1]) and bit_pure(n.args[2])
    if n.op == "un" and n.attr["sym"] in ("-", "abs"):
        return bit_pure(n.args[0])
    return False


def is_approx(n: Node) -> bool:
    """Whether an expression has an operation whose result an implementation may round differently."""
    for m in n.walk():
        if m.op == "math" and m.attr["fn"] in APPROX_FNS:
            return True
        if m.op in ("reduce", "scan") and m.attr["kind"] in ("sum", "cumsum") and D.is_float(m.args[0].dtype):
            return True
        if m.op == "dot" and D.is_float(m.args[0].dtype):
            return True
    return False


class Generator:
    """Builds one kernel from a seed. `max_depth` bounds every tree; `exprs` is the number of cases per kernel."""

    def __init__(self, seed: int, name: str, exprs: int = 8, max_depth: int = 4, avoid: tuple = ()) -> None:
        self.r = random.Random(seed)
        self.avoid = avoid  # known.KnownBug entries whose constructs are left out
        self.name = name
        self.n_exprs = exprs
        self.max_depth = max_depth
        self.inputs: list[Input] = []

    # --- choices -------------------------------------------------------------------------------------------------
    def dtype(self, allowed: tuple[str, ...] | None = None) -> str:
        names = [d for d in DTYPE_WEIGHTS if allowed is None or d in allowed]
        return self.r.choices(names, [DTYPE_WEIGHTS[d] for d in names])[0]

    def literal(self, t: str) -> int | float:
        r = self.r
        if D.is_int(t):
            lo, hi = D.int_bounds(t)
            lo, hi = max(lo, -(1 << 31)), min(hi, (1 << 31) - 1)
            picks = [r.randint(max(lo, -8), min(hi, 8)), r.choice([1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64]), hi, lo]
            v = r.choices(picks, [6, 3, 1, 1])[0]
            return max(lo, min(hi, v))
        return r.choice([0.5, -2.0, 3.0, 0.1, 1e-3, 100.0, -0.0, 1.5, -7.25, 1e30, 65504.0, 448.0, 2.0**-20])

    def input_of(self, t: str) -> Input:
        have = [i for i in self.inputs if i.dtype == t]
        if have and (len(self.inputs) >= MAX_INPUTS or self.r.random() < 0.75):
            return self.r.choice(have)
        if len(self.inputs) >= MAX_INPUTS:
            return self.r.choice(self.inputs)
        r = self.r
        layout = r.choices(["c", "t", "p", "s"], [5, 2, 2, 1])[0]
        fill = r.choices(["mixed", "small", "full", "special"], [6, 2, 1, 1])[0]
        mask = r.choices(["bounds", "holes"], [4, 1])[0]
        other = None
        if mask == "holes" or r.random() < 0.5:
            other = self.literal(t) if t != D.BOOL else 0
        for bug in self.avoid:
            if bug.safe_fill is not None:
                fill = bug.safe_fill(t, fill)
        inp = Input(f"x{len(self.inputs)}", t, layout, fill, mask, other)
        self.inputs.append(inp)
        return inp

    # --- nodes ---------------------------------------------------------------------------------------------------
    def cast(self, n: Node, t: str) -> Node:
        """`n` as dtype `t` (through f32 where Triton needs two steps)."""
        if n.dtype == t:
            return n
        if not can_cast(n.dtype, t):
            n = Node("cast", "float32", [n])
        if n.dtype == t:
            return n
        return Node("cast", t, [n])

    def load(self, t: str) -> Node:
        inp = self.input_of(t)
        return self.cast(Node("load", inp.dtype, attr={"name": inp.name}), t)

    def leaf(self, t: str) -> Node:
        r = self.r
        if t == D.BOOL:
            s = self.dtype()
            return Node(
                "cmp", t, [self.load(s), Node("lit", s, attr={"value": self.literal(s)})], {"sym": r.choice(CMP_SYMS)}
            )
        k = r.random()
        if k < 0.8:
            return self.load(t)
        if k < 0.92:
            idx = Node(
                "index",
                "int32",
                attr={"axis": r.randint(0, 1), "mul": r.choice([1, 2, 3, -1, 7]), "add": r.randint(-4, 4)},
            )
            return self.cast(idx, t)
        return Node("full", t, attr={"value": self.literal(t)})

    def node(self, t: str, depth: int) -> Node:
        if depth <= 0 or self.r.random() < 0.2:
            return self.leaf(t)
        if t == D.BOOL:
            return self.bool_node(depth)
        return (self.int_node if D.is_int(t) else self.float_node)(t, depth)

    def operand(self, t: str, depth: int, lit_ok: bool = True) -> Node:
        if lit_ok and self.r.random() < 0.3:
            return Node("lit", t, attr={"value": self.literal(t)})
        return self.node(t, depth - 1)

    def binary(self, t: str, sym: str, depth: int) -> Node:
        a, b = self.node(t, depth - 1), self.operand(t, depth)
        if b.op == "lit" and self.r.random() < 0.3:
            a, b = b, a
        if D.is_int(t) and sym in ("<<", ">>", "//", "%"):
            b = self.defined_operand(a, b, sym, t)
        return Node("bin", t, [a, b], {"sym": sym})

    def defined_operand(self, a: Node, b: Node, sym: str, t: str) -> Node:
        """A shift amount or divisor for which Triton's IR defines the result. Shifting by >= the width and
        dividing by 0 are poison to MLIR's arith dialect, so Triton's own TTIR passes may fold them as they like
        (`x >> x` becomes 0, assuming x < width; `x // x` may become 1): only a load of another input, opaque to
        the compiler, keeps any value (and then the SDK's documented CUDA results are checked), and for a division
        only when the dividend is a load too: the compiler folds `0 // x` to 0, and a dividend it can fold to 0
        (`x % 1`, seed 303 kernel 1087) is not always visible here; other amounts are masked to the width, other
        divisors or'ed with 1, literals kept in range."""
        w = D.bits(t)
        if b.op == "lit":
            v = b.attr["value"]
            b.attr["value"] = v % w if sym in ("<<", ">>") else (v or 1)
            return b
        names = {n.attr["name"] for n in a.walk() if n.op == "load"}
        if b.op == "load" and b.attr["name"] not in names and (a.op == "load" or sym in ("<<", ">>")):
            return b
        if sym in ("<<", ">>"):
            return Node("bin", t, [b, Node("lit", t, attr={"value": w - 1})], {"sym": "&"})
        return Node("bin", t, [b, Node("lit", t, attr={"value": 1})], {"sym": "|"})

    def common(self, t: str, depth: int) -> Node | None:
        """Operations every non-bool dtype has: select, min/max, casts, bitcasts, keep-dims reductions."""
        r = self.r
        k = r.random()
        if k < 0.2:
            return Node("where", t, [self.node(D.BOOL, depth - 1), self.node(t, depth - 1), self.operand(t, depth)])
        if k < 0.3:
            attr = {"fn": r.choice(["minimum", "maximum"])}
            if D.is_float(t) and r.random() < 0.5:
                attr["nan"] = "all"
            return Node("minmax", t, [self.node(t, depth - 1), self.operand(t, depth)], attr)
        if k < 0.55:
            src = self.dtype() if r.random() < 0.9 else D.BOOL
            child = self.node(src, depth - 1)
            n = self.cast(child, t)
            if (
                n.op == "cast"
                and D.is_float(t)
                and n.args[0].dtype == "float32"
                and D.bits(t) < 32
                and r.random() < 0.3
            ):
                n.attr["rtz"] = True
            return n
        if k < 0.62:
            src = r.choice([s for s in D.same_width(t) if s != D.BOOL])
            # a float's bits are read only where no NaN propagation can have chosen them
            child = self.node(src, depth - 1) if D.is_int(src) else self.load(src)
            return Node("bitcast", t, [child]) if bit_pure(child) else None
        if k < 0.72:
            return self.reduce_node(t, depth, keep=True)
        return None

    def reduce_node(self, t: str, depth: int, keep: bool) -> Node:
        r = self.r
        op = r.choice(REDUCE_OPS)
        src = t if r.random() < 0.6 else self.dtype()
        child = self.node(src, depth - 1)
        axis = r.randint(0, 1)
        red = Node("reduce", reduce_dtype(op, src), [child], {"kind": op, "axis": axis, "keep": keep})
        return self.cast(red, t)

    def int_node(self, t: str, depth: int) -> Node:
        r = self.r
        n = self.common(t, depth) if r.random() < 0.45 else None
        if n is not None:
            return n
        k = r.random()
        if k < 0.7:
            return self.binary(t, r.choice(INT_SYMS), depth)
        if k < 0.85:
            sym = r.choice(["-", "~", "abs"] if D.is_signed(t) else ["-", "~"])
            return Node("un", t, [self.node(t, depth - 1)], {"sym": sym})
        if D.bits(t) >= 32:
            return Node("umulhi", t, [self.node(t, depth - 1), self.node(t, depth - 1)])
        return self.binary(t, r.choice(INT_SYMS), depth)

    def float_node(self, t: str, depth: int) -> Node:
        r = self.r
        n = self.common(t, depth) if r.random() < 0.4 else None
        if n is not None:
            return n
        k = r.random()
        wide = t in ("float32", "float64")
        if k < 0.4:
            return self.binary(t, r.choice(FLOAT_SYMS), depth)
        if k < 0.55 and wide:
            fn = r.choice([f for f in MATH_FNS if t == "float32" or f != "sqrt_rn"])
            return Node("math", t, [self.node(t, depth - 1)], {"fn": fn})
        if k < 0.65 and wide:
            src = (
                t
                if t == "float64" or r.random() < 0.5
                else self.dtype(tuple(d for d in DTYPE_WEIGHTS if d != "float64"))
            )
            syms = ["/", "/"] + (["%"] if D.is_float(src) else []) + (["div_rn"] if src == t == "float32" else [])
            sym = r.choice(syms)
            a, b = self.node(src, depth - 1), self.operand(src, depth)
            if sym == "%":  # fmod jumps by |b| where a crosses a multiple of b: an operand an implementation may
                # round differently (a sum's order, an approximate function) makes its result anything in [0, |b|),
                # which the perturbed reference runs do not sample (seed 304 kernel 113): exact operands only
                a, b = (self.leaf(src) if is_approx(x) else x for x in (a, b))
            return Node("div", t, [a, b], {"sym": sym})
        if k < 0.72 and t != "float8e4nv" and t != "float8e5":
            return Node("fma", t, [self.node(t, depth - 1), self.node(t, depth - 1), self.node(t, depth - 1)])
        if k < 0.77:
            lo, hi = sorted(r.sample([-4.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 100.0], 2))
            attr = {"lo": lo, "hi": hi}
            if r.random() < 0.3:
                attr["nan"] = "all"
            return Node("clamp", t, [self.node(t, depth - 1)], attr)
        if k < 0.9:
            return Node("un", t, [self.node(t, depth - 1)], {"sym": r.choice(["-", "abs"])})
        return self.binary(t, r.choice(FLOAT_SYMS), depth)

    def bool_node(self, depth: int) -> Node:
        r = self.r
        k = r.random()
        if k < 0.6:
            s = self.dtype()
            return Node("cmp", D.BOOL, [self.node(s, depth - 1), self.operand(s, depth)], {"sym": r.choice(CMP_SYMS)})
        if k < 0.85:
            return Node(
                "bin",
                D.BOOL,
                [self.node(D.BOOL, depth - 1), self.node(D.BOOL, depth - 1)],
                {"sym": r.choice(["&", "|", "^"])},
            )
        if k < 0.92:
            return Node("un", D.BOOL, [self.node(D.BOOL, depth - 1)], {"sym": "~"})
        s = self.dtype(tuple(d for d in DTYPE_WEIGHTS if d not in D.FP8))
        return Node("cast", D.BOOL, [self.node(s, depth - 1)])

    # --- roots ---------------------------------------------------------------------------------------------------
    def expr(self, ndim: int) -> Expr:
        r = self.r
        depth = r.randint(1, self.max_depth)
        kinds = ["elementwise", "reduce", "scan"] + (["dot"] if ndim == 2 else [])
        kind = r.choices(kinds, [55, 22, 13, 10][: len(kinds)])[0]
        if kind == "elementwise":
            t = self.dtype() if r.random() < 0.93 else D.BOOL
            return Expr(kind, self.node(t, depth))
        if kind == "reduce":
            t = self.dtype()
            node = self.reduce_node(t, depth, keep=False)
            red = node
            while red.op != "reduce":  # under the cast(s) back to t
                red = red.args[0]
            return Expr(kind, node, {"axis": red.attr["axis"] if ndim == 2 else 0})
        if kind == "scan":
            src = self.dtype()
            child = self.node(src, depth - 1)
            axis = r.randint(0, 1) if ndim == 2 else 0
            scan = Node(
                "scan",
                reduce_dtype("cumsum", src),
                [child],
                {"kind": "cumsum", "axis": axis, "reverse": r.random() < 0.3},
            )
            return Expr(kind, scan, {"axis": axis})
        src = r.choice(DOT_DTYPES)
        dot = Node("dot", dot_acc(src), [self.node(src, depth - 1), self.node(src, depth - 1)])
        return Expr(kind, dot)

    def kernel(self, input_seed: int, opt_level: int) -> KernelSpec:
        r = self.r
        ndim = r.choices([1, 2], [1, 3])[0]
        if ndim == 1:
            BM, BN = r.choice([1, 2, 4, 8, 16, 32, 64, 128]), 1
        else:
            BM, BN = r.choice([1, 2, 4, 8, 16]), r.choice([1, 2, 4, 8, 16, 32])
            while BM * BN > 256:
                BN //= 2
        grid = r.choice([1, 1, 2, 3])
        M = r.randint(max(1, (grid - 1) * BM + 1), grid * BM)
        N = r.randint(1, BN)
        spec = KernelSpec(self.name, ndim, M, N, BM, BN, grid, self.inputs, [], input_seed, opt_level)
        for _ in range(self.n_exprs):
            for _attempt in range(50):
                e = self.expr(ndim)
                if ndim == 1:
                    for n in e.node.walk():
                        if "axis" in n.attr or n.op == "index":
                            n.attr["axis"] = 0
                if not any(k.matches(spec, n) for k in self.avoid for n in e.node.walk()):
                    break
            spec.exprs.append(e)
        return spec


def generate(
    seed: int, index: int, exprs: int = 8, opt_levels: tuple[int, ...] = (3,), avoid: tuple = ()
) -> KernelSpec:
    """Kernel `index` of the run seeded `seed` (the same pair, and the same `avoid`, give the same kernel and
    inputs)."""
    r = random.Random(f"{seed}:{index}")
    name = f"fuzz_s{seed}_k{index}"
    g = Generator(r.getrandbits(64), name, exprs=exprs, avoid=avoid)
    return g.kernel(input_seed=r.getrandbits(32), opt_level=r.choice(opt_levels))
