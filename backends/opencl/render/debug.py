"""Debug ops on OpenCL: `tt.print` (device_print) through `printf`, `tt.assert` (device_assert) through a hidden
error buffer.

Print: the format is the CUDA path's (and cpu_ref's), one line per element: `pid (x, y, z) idx (i, j)<prefix><value>`.
Work-item 0 prints every element of the program's tile in index order (the tile goes through local memory first), so
each program's lines come out in program order; lines of different programs may interleave (line by line).

Assert: a kernel with asserts takes one more parameter, `__global int *tb_err` (appended by the launcher; see
`launcher.py`). The first failing work-item of a launch claims it with `atomic_cmpxchg` and records the assert's
number (an index into the kernel's table of messages and source locations, `RenderedKernel.asserts`) and its program
id; then every work-item of the failing program returns (decided through local memory, so no work-item is left
waiting at a barrier). The launcher reads the buffer after the kernel and raises `AssertionError` in Python.
"""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.attrs import DenseArrayAttr
from triton_backend_sdk.ir.core import Value
from triton_backend_sdk.ir.types import FloatType, PointerType

from . import ctypes as CT
from .context import Idx, RenderContext, Tile, numel
from .rules import OPENCL_RULES

#: the hidden error-buffer parameter (its layout: asserts.ERR_INTS)
ERR = "tb_err"
PID = "tb_pid0, tb_pid1, tb_pid2"
#: a newline in a C string literal
NL = "\\n"


def c_string(text: str) -> str:
    """`text` as the body of a C string literal (printf format: `%` doubled), ASCII only."""
    out = []
    for ch in text.encode("utf-8"):
        c = chr(ch)
        if c == "%":
            out.append("%%")
        elif c in '\\"':
            out.append("\\" + c)
        elif 32 <= ch < 127 and c != "?":  # '?' escaped: no trigraphs
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    return "".join(out)


# ---- tt.assert ---------------------------------------------------------------------------------------------------


@OPENCL_RULES.register(O.Assert)
def render_assert(ctx: RenderContext, op: O.Assert) -> None:
    cond_v = op.condition
    cond = ctx.get(cond_v)
    number = len(ctx.asserts)
    ctx.asserts.append([op.message, str(op.loc) if op.loc is not None else "<unknown>"])
    record = (
        f"if ({ctx.lang.atomic('cmpxchg', 32, ERR, '0', '1')} == 0) {{ {ERR}[1] = {number}; {ERR}[2] = tb_pid0; "
        f"{ERR}[3] = tb_pid1; {ERR}[4] = tb_pid2; }}"
    )
    if not isinstance(cond, Tile):  # a uniform scalar: the whole program fails together
        ctx.emit(f"if (!({cond})) {{ if (lid == 0u) {{ {record} }} return; }}")
        return
    ok = ctx.fresh("ok")
    ctx.emit(f"bool {ok} = true;")
    ctx.tile_loop(cond.shape, lambda idx: ctx.emit(f"if (!({ctx.element(cond, idx)})) {ok} = false;"))
    ctx.emit(f"if (!{ok}) {{ {record} }}")
    off = ctx.alloc(4)
    flag = ctx.local_array("int", off)
    ctx.barrier()
    ctx.emit(f"if (lid == 0u) {flag['0']} = 0;")
    ctx.barrier()
    ctx.emit(f"if (!{ok}) {flag['0']} = 1;")
    ctx.barrier()
    ctx.emit(f"if ({flag['0']}) return;")
    ctx.scratch_top = off


# ---- tt.print ----------------------------------------------------------------------------------------------------


def _value_format(ctx: RenderContext, v: Value, x: str, signed: bool, hex_: bool) -> tuple[str, str]:
    """(printf conversion, argument) printing element `x` of `v` as cpu_ref does (`%f` for floats, decimal or
    zero-padded hex of the bits for integers, pointers as glibc's `%p`)."""
    e = v.type.element
    if isinstance(e, PointerType):
        return ("0x%016lx" if hex_ else "0x%lx"), f"(ulong)({x})"  # glibc's %p, as cpu_ref prints
    if isinstance(e, FloatType):
        ct = ctx.ctype(v)
        if not hex_:
            return "%f", f"({ct})({x})"
        if CT.is_half(v.type):
            return "0x%04x", f"(uint){ctx.helper('tb_f2h')}({x})"
        if CT.is_bf16(v.type):
            return "0x%04x", f"({ctx.lang.bitcast('uint', x)} >> 16)"
        if CT.fp8_of(v.type) is not None:
            return "0x%02x", f"(uint){ctx.fp8_helper(v.type, 'code')}({x})"
        if ct == "double":
            return "0x%016lx", ctx.lang.bitcast("ulong", x)
        return "0x%08x", ctx.lang.bitcast("uint", x)
    w = CT.int_width(v.type)
    if hex_:
        if w == 64:
            return "0x%016lx", f"(ulong)({x})"
        return f"0x%0{max(w // 4, 1)}x", f"(uint)({CT.UINT_C[w]})({x})"
    if w == 64:
        return ("%ld", f"(long)({x})") if signed else ("%lu", f"(ulong)({x})")
    if w == 1:
        return "%d", f"(int)({x})"
    return ("%d", f"(int)({x})") if signed else ("%u", f"(uint)({CT.UINT_C[w]})({x})")


@OPENCL_RULES.register(O.Print)
def render_print(ctx: RenderContext, op: O.Print) -> None:
    ctx.prints = True
    signs = op.attrs.get("isSigned")
    signed_flags = list(signs.values) if isinstance(signs, DenseArrayAttr) else []
    prefix = c_string(op.prefix)
    pid = "pid (%d, %d, %d) idx ("
    if not op.operands:
        ctx.emit(f"if (lid == 0u) {ctx.lang.printf(pid + ')' + prefix + NL, PID)};")
        return
    many = len(op.operands) > 1
    for k, v in enumerate(op.operands):
        signed = bool(signed_flags[k]) if k < len(signed_flags) else True
        tag = f"(operand {k}) " if many else ""
        x = ctx.get(v)
        if not isinstance(x, Tile):
            conv, arg = _value_format(ctx, v, x, signed, op.hex)
            ctx.emit(f"if (lid == 0u) {ctx.lang.printf(pid + ')' + prefix + tag + conv + NL, PID, arg)};")
            continue
        # every element through local memory, then printed in index order by work-item 0
        shape = v.type.shape
        ct = ctx.ctype(v)
        if isinstance(v.type.element, PointerType):  # kept as addresses: a pointer type cannot be in local memory
            ct, x = "ulong", Tile(shape, "ulong", gen=lambda i, x=x: f"(ulong)({ctx.element(x, i)})")
        off = ctx.alloc(numel(shape) * CT.size_of(ct))
        ctx.barrier()
        arr = ctx.write_scratch(x, shape, ct, off)
        ctx.barrier()
        i = ctx.fresh("p")
        idx = Idx(shape, lin=i)
        conv, arg = _value_format(ctx, v, arr[i], signed, op.hex)
        dims = ", ".join(["%u"] * len(shape))
        ctx.emit(f"if (lid == 0u) for (uint {i} = 0u; {i} < {numel(shape)}u; ++{i})")
        ctx.emit(f"  {ctx.lang.printf(pid + dims + ')' + prefix + tag + conv + NL, PID, *idx.dims, arg)};")
        ctx.barrier()
        ctx.scratch_top = off
