"""Debug ops: `tt.print` (device_print), `tt.assert` (device_assert) and barriers.

Print: each element becomes one line, formatted with the C library's `snprintf` and written with one `write(2)` to
file descriptor 1, so lines of concurrently running programs never interleave mid-line and each program's lines
come out in program order. The format is the CUDA path's: `pid (x, y, z) idx (i, j)<prefix><value>`.

Assert: a failing program records the first failure of the launch (message, source location, program id) in the
launch's assert state with a compare-exchange and returns; the entry loop stops starting programs once the state
is set, and the driver (see `sdk/host_asserts.py`) raises `AssertionError` in Python after the launch. The
process survives; programs already running on other threads finish normally. The state belongs to one launch, not
to the module: the launcher passes a fresh one as a hidden last kernel argument, and every function that may fail
takes it as a hidden last parameter, so concurrent launches of one kernel (from several Python threads, or of one
binary loaded once for several kernels) never see each other's failures.

Barriers are no-ops: one program is one thread on the CPU, so every "thread" of a program is already in step.
So is `tl.assume` (a hint).
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.ir.attrs import DenseArrayAttr

from .context import LoweringContext, Tile
from .rules import RULES
from .types import F64, I1, I8, I32, I64, PTR, VOID, bit_width, is_float_type, llvm_type

#: a launch's first assertion failure, { i32 failed, i32 pid_x, i32 pid_y, i32 pid_z, ptr message, ptr location };
#: layout known to `sdk/host_asserts.py`
STATE_TYPE = ir.LiteralStructType([I32, I32, I32, I32, PTR, PTR])
LINE_BYTES = 512


def cstring(ctx: LoweringContext, text: str, hint: str = "str") -> ir.Value:
    data = bytearray(text.encode("utf-8")) + b"\0"
    arr = ir.ArrayType(I8, len(data))
    g = ir.GlobalVariable(ctx.module, arr, name=ctx.module.get_unique_name(hint))
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ir.Constant(arr, data)
    g.type = PTR
    return g


def assert_state(ctx: LoweringContext) -> ir.Value:
    """The launch's assert state in the function being lowered (only functions that may fail take one)."""
    if ctx.assert_state is None:
        raise AssertionError(f"cpu_ref: {ctx.fn.name} lowers an assert but was not counted among the failing functions")
    return ctx.assert_state


def abort_function(ctx: LoweringContext) -> None:
    """Return from the function being lowered (with an undefined value if it has a result)."""
    rt = ctx.fn.function_type.return_type
    if isinstance(rt, ir.VoidType):
        ctx.b.ret_void()
    else:
        ctx.b.ret(ir.Constant(rt, ir.Undefined))


def branch_to_abort(ctx: LoweringContext, failed: ir.Value) -> None:
    """If `failed`, leave the function; code after this continues on the other path."""
    b = ctx.b
    abort = b.append_basic_block("abort")
    cont = b.append_basic_block("cont")
    b.cbranch(failed, abort, cont)
    b.position_at_end(abort)
    abort_function(ctx)
    b.position_at_end(cont)


def launch_failed(ctx: LoweringContext, b: ir.IRBuilder | None = None) -> ir.Value:
    """i1: whether some program of this launch has failed an assertion."""
    b = b or ctx.b
    state = assert_state(ctx)
    flag = b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, 0)], source_etype=STATE_TYPE)
    return b.icmp_unsigned("!=", b.load_atomic(flag, "monotonic", 4, typ=I32), ir.Constant(I32, 0))


@RULES.register(O.Assert)
def lower_assert(ctx: LoweringContext, op: O.Assert) -> None:
    b = ctx.b
    cond = ctx.get(op.condition)
    if isinstance(cond, Tile):
        ok_slot = ctx.alloca(I8, 1, "assert.ok")
        b.store(ir.Constant(I8, 1), ok_slot)

        def check(idx: list[ir.Value]) -> None:
            c = cond.element(ctx.b, idx)
            c = c if c.type == I1 else ctx.b.icmp_unsigned("!=", c, ir.Constant(c.type, 0))
            ctx.b.store(ctx.b.and_(ctx.b.load(ok_slot, typ=I8), ctx.b.zext(c, I8)), ok_slot)

        ctx.loop_nest(cond.shape, check)
        ok = ctx.b.icmp_unsigned("!=", ctx.b.load(ok_slot, typ=I8), ir.Constant(I8, 0))
    else:
        ok = cond if cond.type == I1 else b.icmp_unsigned("!=", cond, ir.Constant(cond.type, 0))
    b = ctx.b
    fail = b.append_basic_block("assert.fail")
    cont = b.append_basic_block("assert.ok")
    b.cbranch(ok, cont, fail)
    b.position_at_end(fail)
    state = assert_state(ctx)
    field = lambda i: b.gep(state, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=STATE_TYPE)
    first = b.extract_value(b.cmpxchg(field(0), ir.Constant(I32, 0), ir.Constant(I32, 1), "acq_rel", "acquire"), 1)
    with b.if_then(first):
        for i, pid in enumerate(ctx.program_ids):
            b.store(pid, field(1 + i))
        b.store(cstring(ctx, op.message, "assert.msg"), field(4))
        b.store(cstring(ctx, str(op.loc) if op.loc is not None else "<unknown>", "assert.loc"), field(5))
    abort_function(ctx)
    b.position_at_end(cont)


@RULES.register(O.Barrier)
def lower_barrier(ctx: LoweringContext, op: O.Barrier) -> None:
    """Nothing to wait for: a program's work items run in order on one thread."""


@RULES.register(O.Assume)
def lower_assume(ctx: LoweringContext, op: O.Assume) -> None:
    """`tl.assume`: passed to LLVM as `llvm.assume`, as Triton's GPU paths do (a false assumption is undefined
    behaviour there too: the kernel author promises it), so LLVM may fold the branches it decides."""
    cond = ctx.scalar(op.condition)
    if cond.type != I1:
        cond = ctx.b.icmp_unsigned("!=", cond, ir.Constant(cond.type, 0))
    ctx.b.call(ctx.intrinsic("llvm.assume", VOID, [I1]), [cond])


def _value_format(t: T.Type, signed: bool, hex_: bool) -> str:
    lt = llvm_type(t)
    if hex_:
        return f"0x%0{max(bit_width(lt) // 4, 1) if lt != PTR else 16}llx"
    if lt == PTR:
        return "%p"
    if is_float_type(lt):
        return "%f"
    if lt == I64:
        return "%lld" if signed else "%llu"
    return "%d" if signed else "%u"


def _vararg(ctx: LoweringContext, v: ir.Value, signed: bool, hex_: bool) -> ir.Value:
    b = ctx.b
    if hex_:
        if v.type == PTR:
            return b.ptrtoint(v, I64)
        if is_float_type(v.type):
            v = b.bitcast(v, ir.IntType(bit_width(v.type)))
        return v if v.type == I64 else b.zext(v, I64)
    if v.type == PTR:
        return v
    if is_float_type(v.type):
        return v if v.type == F64 else b.fpext(v, F64)
    if v.type.width >= 64:
        return v
    return b.sext(v, I32) if signed and v.type != I1 else b.zext(v, I32)


@RULES.register(O.Print)
def lower_print(ctx: LoweringContext, op: O.Print) -> None:
    snprintf = ctx.module.globals.get("snprintf") or ir.Function(
        ctx.module, ir.FunctionType(I32, [PTR, I64, PTR], var_arg=True), name="snprintf"
    )
    write = ctx.intrinsic("write", I64, [I32, PTR, I64])
    buf = ctx.alloca(I8, LINE_BYTES, "print.line")
    signs = op.attrs.get("isSigned")
    signed_flags = list(signs.values) if isinstance(signs, DenseArrayAttr) else []
    many = len(op.operands) > 1

    def emit(fmt: ir.Value, args: list[ir.Value]) -> None:
        b = ctx.b
        n = b.call(snprintf, [buf, ir.Constant(I64, LINE_BYTES), fmt, *args])
        n = b.sext(call_min(ctx, n, LINE_BYTES - 1), I64)
        b.call(write, [ir.Constant(I32, 1), buf, n])

    pid_fmt = "pid (%d, %d, %d) idx ("
    if not op.operands:
        emit(cstring(ctx, pid_fmt + ")" + op.prefix.replace("%", "%%") + "\n", "print.fmt"), list(ctx.program_ids))
        return
    for k, v in enumerate(op.operands):
        signed = bool(signed_flags[k]) if k < len(signed_flags) else True
        tag = f"(operand {k}) " if many else ""
        value_fmt = _value_format(v.type, signed, op.hex)
        x = ctx.get(v)
        if isinstance(x, Tile):
            idx_fmt = ", ".join(["%lld"] * len(x.shape))
            fmt = cstring(ctx, f"{pid_fmt}{idx_fmt}){op.prefix.replace('%', '%%')}{tag}{value_fmt}\n", "print.fmt")
            ctx.loop_nest(
                x.shape,
                lambda idx, x=x, fmt=fmt, signed=signed: emit(
                    fmt, [*ctx.program_ids, *idx, _vararg(ctx, x.element(ctx.b, idx), signed, op.hex)]
                ),
            )
        else:
            fmt = cstring(ctx, f"{pid_fmt}){op.prefix.replace('%', '%%')}{tag}{value_fmt}\n", "print.fmt")
            emit(fmt, [*ctx.program_ids, _vararg(ctx, x, signed, op.hex)])


def call_min(ctx: LoweringContext, n: ir.Value, bound: int) -> ir.Value:
    """`n` clamped to [0, bound] (snprintf returns the untruncated length, or a negative number on error)."""
    b = ctx.b
    c, zero = ir.Constant(n.type, bound), ir.Constant(n.type, 0)
    n = b.select(b.icmp_signed("<", n, zero), zero, n)
    return b.select(b.icmp_signed("<", n, c), n, c)
