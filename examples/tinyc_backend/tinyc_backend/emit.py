"""The C a tinyc kernel becomes, and the emitter its rules (rules.py) write it through.

A scalar SSA value is a C local; a tile (tensor) is a C array of its elements in row-major order, or, where every
element is the same (a splat, a splat constant), just that scalar expression. Names are generated (`v12`, `p0`),
never the kernel's own, so no Python identifier can collide with a C keyword.

The module is one `static void tinyc_program(<kernel parameters>, pid_x, pid_y, pid_z, gx, gy, gz, state)` and the
entry of the SDK's launch contract (`triton_backend_sdk.launch`): `void tinyc_entry(void **args, int32_t gx,
int32_t gy, int32_t gz, int64_t start, int64_t end)` runs the programs with linear ids in [start, end), `args[i]`
pointing at runtime argument i and, for a kernel with asserts, `args[n]` at the launch's assert state
(`triton_backend_sdk.host_asserts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Block, Module, Op, Value
from triton_backend_sdk.ir.types import FloatKind, FloatType, IndexType, IntType, PointerType, Type
from triton_backend_sdk.lowering import RuleTable

NAME = "tinyc"
ENTRY = "tinyc_entry"

PRELUDE = r"""#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct { int32_t failed, pid_x, pid_y, pid_z; const char *message, *location; } tsdk_assert_state;

static void tinyc_fail(tsdk_assert_state *st, const char *msg, const char *loc, int32_t x, int32_t y, int32_t z) {
  int32_t expected = 0;
  if (__atomic_compare_exchange_n(&st->failed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    st->pid_x = x; st->pid_y = y; st->pid_z = z; st->message = msg; st->location = loc;
  }
}

/* arith.maximumf / minimumf: NaN if either is NaN, and -0 < +0 (C's fmax/fmin are maxnumf/minnumf) */
#define TINYC_MAXIMUM(T, S) static inline T tinyc_maximum##S(T a, T b) { \
  if (a != a || b != b) return a + b; if (a == b) return signbit(a) ? b : a; return a > b ? a : b; }
#define TINYC_MINIMUM(T, S) static inline T tinyc_minimum##S(T a, T b) { \
  if (a != a || b != b) return a + b; if (a == b) return signbit(a) ? a : b; return a < b ? a : b; }
TINYC_MAXIMUM(float, f) TINYC_MAXIMUM(double, d) TINYC_MINIMUM(float, f) TINYC_MINIMUM(double, d)
"""


def ctype(t: Type, backend: str = NAME) -> str:
    """The C type of one element of `t` (a pointer's: a pointer to its pointee's)."""
    e = t.element
    if isinstance(e, IntType):
        if e.width == 1:
            return "uint8_t"
        if e.width in (8, 16, 32, 64):
            return f"int{e.width}_t"
    elif isinstance(e, FloatType):
        if e.kind is FloatKind.F32:
            return "float"
        if e.kind is FloatKind.F64:
            return "double"
    elif isinstance(e, PointerType):
        return f"{ctype(e.pointee, backend)} *"
    elif isinstance(e, IndexType):
        return "int64_t"
    raise UnsupportedError(backend, f"element type {e} has no C type on {backend} (fp32, fp64 and integers only)")


def utype(t: Type) -> str:
    """The unsigned C type of an integer element type's width."""
    e = t.element
    return "uint8_t" if e.width == 1 else f"uint{e.width}_t"


def float_suffix(t: Type) -> str:
    """C's float-function suffix: `expf` for float, `exp` for double."""
    return "f" if t.element == FloatType(FloatKind.F32) else ""


def literal(value: float, t: Type) -> str:
    """An exact C literal of `value` as an element of `t`."""
    e = t.element
    c = ctype(t)
    if isinstance(e, FloatType):
        v = float(value)
        if math.isnan(v):
            return f"(({c})NAN)"
        if math.isinf(v):
            return f"(({c}){'-' if v < 0 else ''}INFINITY)"
        return f"(({c}){v.hex()})"
    w = e.width if isinstance(e, IntType) else 64
    bits = int(value) & ((1 << w) - 1)
    return str(bits) if w == 1 else f"(({c})UINT64_C({bits}))"


def c_string(text: str) -> str:
    """A C string literal of `text`'s UTF-8 bytes (octal escapes outside printable ASCII)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        out.append(ch if 32 <= byte < 127 and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


class Emitter:
    """The C being written for one kernel: statements, the C name of every value, and the rule table."""

    def __init__(self, table: RuleTable) -> None:
        self.table = table
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict[Value, str] = {}
        #: tiles whose elements are all one scalar C expression
        self.uniform: dict[Value, str] = {}
        self._count = 0
        self.asserts = False

    # ---- names and values --------------------------------------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def bind(self, v: Value, name: str) -> None:
        self.names[v] = name

    def at(self, v: Value, idx: str = "0") -> str:
        """Element `idx` (a C expression) of `v`; the value itself for a scalar."""
        if v in self.uniform:
            return self.uniform[v]
        name = self.names[v]
        return f"{name}[{idx}]" if v.type.is_tensor else name

    def define(self, v: Value, init: str | None = None) -> str:
        """Declare `v` (an array for a tile; a scalar, initialized when `init` is given) and return its name."""
        name = self.fresh()
        self.bind(v, name)
        c = ctype(v.type)
        if v.type.is_tensor:
            self.line(f"{c} {name}[{v.type.numel}];")
        else:
            self.line(f"{c} {name}{f' = {init}' if init is not None else ''};")
        return name

    def define_uniform(self, v: Value, scalar: str) -> None:
        """`v` is a tile all of whose elements are `scalar` (a C expression without side effects)."""
        self.uniform[v] = scalar

    def assign(self, dst: str, v: Value) -> None:
        """Copy `v` (scalar or tile) into the storage named `dst` of the same type."""
        if not v.type.is_tensor:
            self.line(f"{dst} = {self.at(v)};")
        elif v in self.uniform:
            with self.loop(v.type.numel) as i:
                self.line(f"{dst}[{i}] = {self.uniform[v]};")
        else:
            self.line(f"memcpy({dst}, {self.names[v]}, sizeof({dst}));")

    # ---- statements --------------------------------------------------------------------------------------------

    @contextmanager
    def block_scope(self, head: str) -> Iterator[None]:
        self.line(head + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self.line("}")

    @contextmanager
    def loop(self, n: int, start: str = "0") -> Iterator[str]:
        i = self.fresh("i")
        with self.block_scope(f"for (int64_t {i} = {start}; {i} < {n}; ++{i})"):
            yield i

    def elementwise(self, op: Op, expr: Callable[..., str]) -> None:
        """The result of `op` element by element: `expr` gets each operand's element as C text."""
        res = op.results[0]
        if not res.type.is_tensor:
            self.define(res, expr(*(self.at(a) for a in op.operands)))
            return
        if all(a in self.uniform for a in op.operands):
            scalar = self.fresh()
            self.line(f"{ctype(res.type)} {scalar} = {expr(*(self.uniform[a] for a in op.operands))};")
            self.define_uniform(res, scalar)
            return
        name = self.define(res)
        with self.loop(res.type.numel) as i:
            self.line(f"{name}[{i}] = {expr(*(self.at(a, i) for a in op.operands))};")

    def emit_ops(self, block: Block) -> Op | None:
        """Emit every op of `block` but a terminator that forwards values to the op owning the region (`scf.yield`,
        `tt.reduce.return`, `tt.scan.return`, ...), which is returned for that op's rule to handle (any other
        terminator, a branch say, goes to the rule table and fails there)."""
        region = block.parent
        if region is not None and len(region.blocks) > 1:
            owner = region.parent.op_name if region.parent is not None else "a region"
            raise UnsupportedError(self.table.backend, f"branches between blocks (an early return?) in {owner}")
        for op in list(block.ops):
            if isinstance(op, O.ReturnLike) and not isinstance(op, O.Return):
                return op
            self.table.lookup(op)(self, op)
        return None

    def unsupported(self, what: str, op: Op) -> UnsupportedError:
        return UnsupportedError(self.table.backend, f"{what} ({op.op_name} at {op.loc})")


def kernel_function(module: Module, name: str) -> O.Func:
    funcs = [op for op in module.ops if isinstance(op, O.Func)]
    for f in funcs:
        if f.sym_name == name:
            return f
    raise UnsupportedError(NAME, f"no function {name!r} in the module ({[f.sym_name for f in funcs]})")


def render_module(module: Module, name: str, table: RuleTable) -> tuple[str, bool]:
    """(C source, whether the kernel may fail an assert) of kernel `name`. Calls are not supported: Triton inlines
    every function that is not `noinline`."""
    fn = kernel_function(module, name)
    e = Emitter(table)
    params = []
    args = fn.regions[0].entry.args
    for k, a in enumerate(args):
        e.bind(a, f"p{k}")
        params.append(f"{ctype(a.type)} p{k}")
    e.emit_ops(fn.regions[0].entry)
    ids = "int32_t pid_x, int32_t pid_y, int32_t pid_z, int32_t gx, int32_t gy, int32_t gz"
    out = [PRELUDE, f"static void tinyc_program({', '.join([*params, ids, 'tsdk_assert_state *st'])}) {{"]
    out += e.lines
    out.append("}\n")
    out.append(f"void {ENTRY}(void **args, int32_t gx, int32_t gy, int32_t gz, int64_t start, int64_t end) {{")
    unpacked = []
    for k, a in enumerate(args):
        unpacked.append(f"*({ctype(a.type)} *)args[{k}]")
    state = f"*(tsdk_assert_state **)args[{len(args)}]" if e.asserts else "0"
    out.append(f"  tsdk_assert_state *st = {state};")
    out.append("  for (int64_t lin = start; lin < end; ++lin) {")
    out.append("    if (st && __atomic_load_n(&st->failed, __ATOMIC_RELAXED)) return;")
    pid = "(int32_t)(lin % gx), (int32_t)((lin / gx) % gy), (int32_t)(lin / ((int64_t)gx * gy))"
    out.append(f"    tinyc_program({', '.join([*unpacked, pid, 'gx, gy, gz, st'])});")
    out.append("  }")
    out.append("}\n")
    return "\n".join(out), e.asserts
