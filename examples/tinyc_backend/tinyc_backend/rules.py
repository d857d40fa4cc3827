"""tinyc's lowering rules: one per op class (or op family), each writing C through the `Emitter`.

The SDK's shared legalizations run first (integer division and shift semantics, the math library, ...), so these
rules see a small set of ops. An op without a rule here (scans, atomics, calls, ...) fails the compile with
`LoweringError` naming the op, its dtype and source line: tinyc never guesses.
"""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.attrs import DenseAttr, FloatAttr, IntegerAttr
from triton_backend_sdk.ir.core import Block, Op, Value
from triton_backend_sdk.ir.dialects.libm import LibmOp
from triton_backend_sdk.ir.types import FloatType, IntType, PointerType
from triton_backend_sdk.lowering import RuleTable

from .emit import NAME, Emitter, c_string, ctype, float_suffix, literal, utype

RULES = RuleTable(NAME)


def _row_major(shape: tuple[int, ...]) -> list[int]:
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return strides[::-1]


def _remap(i: str, shape: tuple[int, ...], src_strides: list[int]) -> str:
    """The source index of element `i` of a tile of `shape`, each dimension k read at stride `src_strides[k]`."""
    terms = []
    for k, (d, st) in enumerate(zip(shape, _row_major(shape))):
        if src_strides[k] and d > 1:
            terms.append(f"(({i} / {st}) % {d}) * {src_strides[k]}")
    return " + ".join(terms) or "0"


# ---- values, shapes, program ids -------------------------------------------------------------------------------


@RULES.register(O.Constant)
def constant(e: Emitter, op: O.Constant) -> None:
    a, res = op.value, op.result
    if isinstance(a, (IntegerAttr, FloatAttr)):
        e.define(res, literal(a.value, res.type))
    elif isinstance(a, DenseAttr) and a.is_splat:
        e.define_uniform(res, literal(a.values[0], res.type))
    elif isinstance(a, DenseAttr):
        name = e.fresh("c")
        values = ", ".join(literal(v, res.type) for v in a.values)
        e.line(f"static const {ctype(res.type)} {name}[{len(a.values)}] = {{{values}}};")
        e.bind(res, name)
    else:
        raise e.unsupported(f"constant {a!r}", op)


@RULES.register(O.GetProgramId)
def program_id(e: Emitter, op: O.GetProgramId) -> None:
    e.define(op.result, ("pid_x", "pid_y", "pid_z")[op.axis])


@RULES.register(O.GetNumPrograms)
def num_programs(e: Emitter, op: O.GetNumPrograms) -> None:
    e.define(op.result, ("gx", "gy", "gz")[op.axis])


@RULES.register(O.MakeRange)
def make_range(e: Emitter, op: O.MakeRange) -> None:
    name = e.define(op.result)
    with e.loop(op.result.type.numel) as i:
        e.line(f"{name}[{i}] = (int32_t)({i} + {op.start});")


@RULES.register(O.Splat)
def splat(e: Emitter, op: O.Splat) -> None:
    e.define_uniform(op.result, e.at(op.src))


@RULES.register(O.ExpandDims, O.Reshape)
def same_order(e: Emitter, op: Op) -> None:
    """Row-major order is kept: element i of the result is element i of the source."""
    src, res = op.operands[0], op.results[0]
    if src in e.uniform:
        e.define_uniform(res, e.uniform[src])
    else:
        e.bind(res, e.names[src])


@RULES.register(O.Broadcast)
def broadcast(e: Emitter, op: O.Broadcast) -> None:
    src, res = op.src, op.result
    if src in e.uniform or src.type.numel == 1:
        e.define_uniform(res, e.at(src, "0"))
        return
    strides = [0 if d == 1 else s for d, s in zip(src.type.shape, _row_major(src.type.shape))]
    name = e.define(res)
    with e.loop(res.type.numel) as i:
        e.line(f"{name}[{i}] = {e.at(src, _remap(i, res.type.shape, strides))};")


@RULES.register(O.Trans)
def trans(e: Emitter, op: O.Trans) -> None:
    src, res = op.operands[0], op.results[0]
    if src in e.uniform:
        e.define_uniform(res, e.uniform[src])
        return
    src_strides = _row_major(src.type.shape)
    strides = [src_strides[k] for k in op.order]
    name = e.define(res)
    with e.loop(res.type.numel) as i:
        e.line(f"{name}[{i}] = {e.at(src, _remap(i, res.type.shape, strides))};")


# ---- elementwise arithmetic ---------------------------------------------------------------------------------


def _int(c: str, expr: str) -> str:
    return f"(({c})({expr}))"


_INT_BINARY = {
    O.AddI: "{a} + {b}",
    O.SubI: "{a} - {b}",
    O.MulI: "{a} * {b}",
    O.DivSI: "{a} / {b}",
    O.RemSI: "{a} % {b}",
    O.AndI: "{a} & {b}",
    O.OrI: "{a} | {b}",
    O.XOrI: "{a} ^ {b}",
    O.ShRSI: "{a} >> {b}",
    O.MinSI: "{a} < {b} ? {a} : {b}",
    O.MaxSI: "{a} > {b} ? {a} : {b}",
    # unsigned: both operands as the unsigned type of the width
    O.DivUI: "({u}){a} / ({u}){b}",
    O.RemUI: "({u}){a} % ({u}){b}",
    O.ShLI: "({u}){a} << ({u}){b}",
    O.ShRUI: "({u}){a} >> ({u}){b}",
    O.MinUI: "({u}){a} < ({u}){b} ? {a} : {b}",
    O.MaxUI: "({u}){a} > ({u}){b} ? {a} : {b}",
}


@RULES.register(*_INT_BINARY)
def int_binary(e: Emitter, op: Op) -> None:
    """Compiled with -fwrapv: signed overflow wraps as in Triton. The SDK's legalizations have already given
    division by zero, INT_MIN / -1 and out-of-range shifts their Triton results."""
    t = op.results[0].type
    c, u, pattern = ctype(t), utype(t), _INT_BINARY[type(op)]
    mask = " & 1" if t.element.width == 1 else ""
    e.elementwise(op, lambda a, b: _int(c, f"({pattern.format(a=a, b=b, u=u)}){mask}"))


_FLOAT_BINARY = {
    O.AddF: "({a} + {b})",
    O.SubF: "({a} - {b})",
    O.MulF: "({a} * {b})",
    O.DivF: "({a} / {b})",
    O.PreciseDivF: "({a} / {b})",
    O.RemF: "fmod{s}({a}, {b})",
    O.MaxNumF: "fmax{s}({a}, {b})",
    O.MinNumF: "fmin{s}({a}, {b})",
    O.MaximumF: "tinyc_maximum{d}({a}, {b})",
    O.MinimumF: "tinyc_minimum{d}({a}, {b})",
}


@RULES.register(*_FLOAT_BINARY)
def float_binary(e: Emitter, op: Op) -> None:
    s = float_suffix(op.results[0].type)
    pattern = _FLOAT_BINARY[type(op)]
    e.elementwise(op, lambda a, b: pattern.format(a=a, b=b, s=s, d=s or "d"))


@RULES.register(O.FloatUnaryOp, O.FloatBinaryOp, LibmOp)
def c_math(e: Emitter, op: Op) -> None:
    """Every float op whose class names its C function (`function`: `exp`, `atan2`, `hypot`, ...), called as
    `expf` on floats; an op of a family without a C function is not supported."""
    fn = type(op).function
    if isinstance(op, O.NegF):
        e.elementwise(op, lambda a: f"(-{a})")
        return
    if isinstance(op, O.Rsqrt):
        s = float_suffix(op.result.type)
        e.elementwise(op, lambda a: f"(1 / sqrt{s}({a}))")
        return
    if not fn:
        raise e.unsupported(f"{type(op).__name__} has no C function", op)
    call = fn + float_suffix(op.results[0].type)
    e.elementwise(op, lambda *xs: f"{call}({', '.join(xs)})")


@RULES.register(O.Fma)
def fma(e: Emitter, op: O.Fma) -> None:
    s = float_suffix(op.result.type)
    e.elementwise(op, lambda a, b, c: f"fma{s}({a}, {b}, {c})")


@RULES.register(O.CmpI)
def cmpi(e: Emitter, op: O.CmpI) -> None:
    rel, t = op.predicate.relation, op.lhs.type
    if isinstance(t.element, PointerType):
        e.elementwise(op, lambda a, b: f"((uintptr_t){a} {rel} (uintptr_t){b})")
    elif op.predicate.unsigned:
        u = utype(t)
        e.elementwise(op, lambda a, b: f"(({u}){a} {rel} ({u}){b})")
    else:
        e.elementwise(op, lambda a, b: f"({a} {rel} {b})")


@RULES.register(O.CmpF)
def cmpf(e: Emitter, op: O.CmpF) -> None:
    pattern = op.predicate.c_pattern
    e.elementwise(op, lambda a, b: pattern.format(a=a, b=b, isnan="isnan"))


@RULES.register(O.Select)
def select(e: Emitter, op: O.Select) -> None:
    e.elementwise(op, lambda c, a, b: f"({c} ? {a} : {b})")


@RULES.register(O.CastOp)
def cast(e: Emitter, op: Op) -> None:
    """Conversions; C's own conversions are Triton's where both are defined (float -> int out of range is undefined
    in both)."""
    src, res = op.operands[0].type, op.results[0].type
    c = ctype(res)
    if isinstance(op, (O.ArithBitcast, O.TTBitcast)) and not isinstance(src.element, PointerType):
        tmp = e.fresh("bits")
        e.line(f"union {{ {ctype(src)} from; {c} to; }} {tmp};")
        e.elementwise(op, lambda a: f"({tmp}.from = {a}, {tmp}.to)")
        return
    if isinstance(res.element, IntType) and res.element.width == 1:  # trunci keeps the low bit
        e.elementwise(op, lambda a: f"((uint8_t)(({a}) & 1))" if isinstance(src.element, IntType) else f"(({a}) != 0)")
        return
    if isinstance(op, (O.ExtUI, O.UIToFP, O.IndexCastUI)) or (isinstance(op, O.ExtSI) and src.element == IntType(1)):
        if isinstance(op, O.ExtSI):  # i1 true sign-extends to -1
            e.elementwise(op, lambda a: f"(({c})-({c}){a})")
        else:
            u = utype(src)
            e.elementwise(op, lambda a: f"(({c})({u}){a})")
        return
    if isinstance(op, O.FPToUI):
        u = utype(res)
        e.elementwise(op, lambda a: f"(({c})({u}){a})")
        return
    if isinstance(op, (O.IntToPtr, O.PtrToInt)) or isinstance(src.element, PointerType):
        e.elementwise(op, lambda a: f"(({c})(uintptr_t){a})")
        return
    if isinstance(src.element, FloatType) or isinstance(res.element, FloatType) or isinstance(src.element, IntType):
        e.elementwise(op, lambda a: f"(({c}){a})")
        return
    raise e.unsupported(f"conversion {src} -> {res}", op)


# ---- memory ---------------------------------------------------------------------------------------------------


@RULES.register(O.AddPtr)
def addptr(e: Emitter, op: O.AddPtr) -> None:
    e.elementwise(op, lambda p, off: f"({p} + {off})")


@RULES.register(O.Load)
def load(e: Emitter, op: O.Load) -> None:
    res = op.result
    zero = literal(0, res.type)

    def one(i: str) -> str:
        value = f"*{e.at(op.ptr, i)}"
        if op.mask is None:
            return value
        other = e.at(op.other, i) if op.other is not None else zero
        return f"({e.at(op.mask, i)} ? {value} : {other})"

    if not res.type.is_tensor:
        e.define(res, one("0"))
        return
    name = e.define(res)
    with e.loop(res.type.numel) as i:
        e.line(f"{name}[{i}] = {one(i)};")


@RULES.register(O.Store)
def store(e: Emitter, op: O.Store) -> None:
    n = op.value.type.numel if op.value.type.is_tensor else 1

    def one(i: str) -> None:
        guard = f"if ({e.at(op.mask, i)}) " if op.mask is not None else ""
        e.line(f"{guard}*{e.at(op.ptr, i)} = {e.at(op.value, i)};")

    if op.value.type.is_tensor:
        with e.loop(n) as i:
            one(i)
    else:
        one("0")


# ---- reductions and dots --------------------------------------------------------------------------------------


@RULES.register(O.Reduce)
def reduce(e: Emitter, op: O.Reduce) -> None:
    """Sequential combine along the axis (a tree on the GPU: float sums differ in rounding, within tolerance)."""
    srcs, outs, body, outer, length, inner = _along_axis(e, op)
    n = len(srcs)
    with e.loop(outer) as o, e.loop(inner) as j:
        accs = []
        for s in srcs:
            acc = e.fresh("acc")
            e.line(f"{ctype(s.type)} {acc} = {e.at(s, f'{o} * {length * inner} + {j}')};")
            accs.append(acc)
        with e.loop(length, start="1") as k:
            for a, acc in zip(body.args[:n], accs):
                e.bind(a, acc)
            for b, s in zip(body.args[n:], srcs):
                e.bind(b, e.at(s, f"{o} * {length * inner} + {k} * {inner} + {j}"))
            _combine(e, body, accs)
        for r, name, acc in zip(op.results, outs, accs):
            e.line(f"{name}[{o} * {inner} + {j}] = {acc};" if r.type.is_tensor else f"{name} = {acc};")


@RULES.register(O.Scan)
def scan(e: Emitter, op: O.Scan) -> None:
    """Inclusive scan along the axis, element by element (from the end when `reverse`)."""
    srcs, outs, body, outer, length, inner = _along_axis(e, op)
    n = len(srcs)
    with e.loop(outer) as o, e.loop(inner) as j:
        at = f"{o} * {length * inner} + ({{k}}) * {inner} + {j}"
        first = f"{length - 1}" if op.reverse else "0"
        accs = []
        for s, out in zip(srcs, outs):
            acc = e.fresh("acc")
            e.line(f"{ctype(s.type)} {acc} = {e.at(s, at.format(k=first))};")
            e.line(f"{out}[{at.format(k=first)}] = {acc};")
            accs.append(acc)
        with e.loop(length, start="1") as step:
            k = f"{length - 1} - {step}" if op.reverse else step
            for a, acc in zip(body.args[:n], accs):
                e.bind(a, acc)
            for b, s in zip(body.args[n:], srcs):
                e.bind(b, e.at(s, at.format(k=k)))
            _combine(e, body, accs)
            for out, acc in zip(outs, accs):
                e.line(f"{out}[{at.format(k=k)}] = {acc};")


def _along_axis(e: Emitter, op: Op) -> tuple[list[Value], list[str], Block, int, int, int]:
    """A reduce's or scan's operands, declared results, combine region, and its shape split at the axis: (outer,
    length, inner) element counts."""
    srcs = list(op.operands)
    shape, axis = srcs[0].type.shape, op.axis
    outs = [e.define(r) for r in op.results]
    return srcs, outs, op.regions[0].entry, _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _combine(e: Emitter, body: Block, accs: list[str]) -> None:
    """Emit a reduce/scan combine region over bound arguments and assign its results to `accs`."""
    term = e.emit_ops(body)
    new = []
    for v in term.operands:
        t = e.fresh("next")
        e.line(f"{ctype(v.type)} {t} = {e.at(v)};")
        new.append(t)
    for acc, t in zip(accs, new):
        e.line(f"{acc} = {t};")


@RULES.register(O.MulhiUI)
def mulhiui(e: Emitter, op: O.MulhiUI) -> None:
    """The high half of the unsigned product (64-bit operands through gcc's/clang's unsigned __int128)."""
    t = op.results[0].type
    w, c, u = t.element.width, ctype(t), utype(t)
    wide = "unsigned __int128" if w == 64 else "uint64_t"
    e.elementwise(op, lambda a, b: f"(({c})((({wide})({u}){a} * ({wide})({u}){b}) >> {w}))")


@RULES.register(O.Dot)
def dot(e: Emitter, op: O.Dot) -> None:
    a, b, c, res = op.a, op.b, op.c, op.result
    if len(res.type.shape) != 2:
        raise e.unsupported("batched (3-d) tl.dot", op)
    (m, k), n = a.type.shape, res.type.shape[1]
    t = ctype(res.type)
    name = e.define(res)
    with e.loop(m) as i, e.loop(n) as j:
        acc = e.fresh("acc")
        e.line(f"{t} {acc} = {e.at(c, f'{i} * {n} + {j}')};")
        with e.loop(k) as q:
            e.line(f"{acc} += ({t}){e.at(a, f'{i} * {k} + {q}')} * ({t}){e.at(b, f'{q} * {n} + {j}')};")
        e.line(f"{name}[{i} * {n} + {j}] = {acc};")


# ---- control flow and debugging ----------------------------------------------------------------------------------


def _yield_into(e: Emitter, targets: list[str], values: list[Value], carried: set[Value]) -> None:
    """Assign yielded values; through temporaries where one reads a carried value another assignment overwrites."""
    if not any(v in carried for v in values):
        for name, v in zip(targets, values):
            e.assign(name, v)
        return
    temps = []
    for v in values:
        t = e.fresh("y")
        c = ctype(v.type)
        e.line(f"{c} {t}[{v.type.numel}];" if v.type.is_tensor else f"{c} {t};")
        e.assign(t, v)
        temps.append(t)
    for name, t, v in zip(targets, temps, values):
        e.line(f"memcpy({name}, {t}, sizeof({name}));" if v.type.is_tensor else f"{name} = {t};")


@RULES.register(O.For)
def for_loop(e: Emitter, op: O.For) -> None:
    lower, upper, step = op.operands[:3]
    inits = op.operands[3:]
    body = op.body
    iv, iters = body.args[0], body.args[1:]
    carried = [e.define(r) for r in op.results]
    for name, v in zip(carried, inits):
        e.assign(name, v)
    for a, name in zip(iters, carried):
        e.bind(a, name)
    i = e.fresh("iv")
    e.bind(iv, i)
    c = ctype(iv.type)
    cond = f"({utype(iv.type)}){i} < ({utype(iv.type)}){e.at(upper)}" if op.unsigned_cmp else f"{i} < {e.at(upper)}"
    with e.block_scope(f"for ({c} {i} = {e.at(lower)}; {cond}; {i} += {e.at(step)})"):
        term = e.emit_ops(body)
        _yield_into(e, carried, list(term.operands) if term is not None else [], set(iters))


@RULES.register(O.If)
def if_(e: Emitter, op: O.If) -> None:
    outs = [e.define(r) for r in op.results]
    with e.block_scope(f"if ({e.at(op.condition)})"):
        term = e.emit_ops(op.then_block)
        _yield_into(e, outs, list(term.operands) if term is not None else [], set())
    if op.else_block is not None:
        with e.block_scope("else"):
            term = e.emit_ops(op.else_block)
            _yield_into(e, outs, list(term.operands) if term is not None else [], set())


@RULES.register(O.Return)
def return_(e: Emitter, op: O.Return) -> None:
    e.line("return;")


@RULES.register(O.Assert)
def assert_(e: Emitter, op: O.Assert) -> None:
    """The launch's first failure is recorded in its assert state and the program returns; the driver raises
    AssertionError after the launch (triton_backend_sdk.host_asserts)."""
    e.asserts = True
    cond = op.condition
    msg, loc = c_string(op.message), c_string(str(op.loc) if op.loc is not None else "<unknown>")
    fail = f"{{ tinyc_fail(st, {msg}, {loc}, pid_x, pid_y, pid_z); return; }}"
    if cond.type.is_tensor:
        with e.loop(cond.type.numel) as i:
            e.line(f"if (!{e.at(cond, i)}) {fail}")
    else:
        e.line(f"if (!{e.at(cond)}) {fail}")


@RULES.register(O.Assume, O.Barrier)
def nothing(e: Emitter, op: Op) -> None:
    """A hint, and a barrier between the threads of a program: tinyc runs each program on one thread."""
