"""Printer of the SDK IR as MLIR-like TTIR text that `parse_ttir` reads back to an equivalent module.

Custom forms follow Triton's own spelling and come from the op's class (`Op.print_custom`: its `assembly_format`, see
`syntax.py`, or its own method); other ops print in MLIR's generic form, which the reader always accepts, with the
class's declared attributes as properties (`<{axis = 0 : i32}>`). Locations print inline (`loc("x"("file.py":12:5))`) so that they survive a round trip.

Naming is deterministic: a value keeps its name (suffixed `_0`, `_1`, ... where needed to be unique within its
top-level op); unnamed values are numbered `%0`, `%1`, ... in textual order. A multi-result op whose results share
one name (or none) prints as a group `%x:2` used as `%x#1`; otherwise as `%a, %b = ...`.
"""

from __future__ import annotations

import math
import re
import struct

from .attrs import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
)
from .core import Block, Location, Module, Op, Region, UnknownOp, Value
from .enums import ENUM_CODES, EnumAttr
from .reader import round_float
from .syntax import format_of
from .types import FloatKind, FloatType, FunctionType, IntType, Type

__all__ = ["format_attribute", "format_float", "print_module", "print_op"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_PLAIN = re.compile(r"[ !#-\[\]-~]*\Z")
_SUFFIX = re.compile(r"[A-Za-z_$.\-][A-Za-z0-9_$.\-]*\Z")


def _escape(s: str) -> str:
    """LLVM's printEscapedString: printable ASCII verbatim except `"` and `\\`, everything else as `\\XX`."""
    if _PLAIN.match(s):
        return '"' + s + '"'
    out = []
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0x20 <= o < 0x7F and ch != '"':
            out.append(ch)
        else:
            out.extend(f"\\{b:02X}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    return name if _IDENT.match(name) else _escape(name)


_HEX_FORMATS = {
    FloatKind.F16: ("<e", "<H", 4),
    FloatKind.F32: ("<f", "<I", 8),
    FloatKind.TF32: ("<f", "<I", 8),
    FloatKind.F64: ("<d", "<Q", 16),
}


def _float_bits(v: float, t: FloatType) -> str:
    if t.kind == FloatKind.BF16:
        bits = struct.unpack("<I", struct.pack("<f", v))[0] >> 16
        return f"0x{bits:04X}"
    fmt = _HEX_FORMATS.get(t.kind)
    if fmt is None:
        raise ValueError(f"cannot print non-finite {t} constant")
    bits = struct.unpack(fmt[1], struct.pack(fmt[0], v))[0]
    return f"0x{bits:0{fmt[2]}X}"


def format_float(v: float, t: Type) -> str:
    """MLIR's spelling: `%e` with 6 digits if that reads back to the same value of type `t`, more digits if not,
    and the hex bit pattern for inf/nan."""
    if not math.isfinite(v):
        if not isinstance(t, FloatType):
            raise ValueError(f"non-finite value of non-float type {t}")
        return _float_bits(v, t)
    exact = round_float(v, t)
    for digits in range(6, 18):
        s = f"{v:.{digits}e}"
        if round_float(float(s), t) == exact:
            return s
    return f"{v:.17e}"


def _scalar(v: float, t: Type) -> str:
    if isinstance(t, FloatType):
        return format_float(float(v), t)
    if isinstance(t, IntType) and t.width == 1 and not t.signedness:
        return "true" if v else "false"
    return str(int(v))


def _dense_body(a: DenseAttr) -> str:
    elem = a.type.elem
    if a.is_splat or a.type.numel == 1 and len(a.values) == 1:
        return _scalar(a.values[0], elem)
    vals = [_scalar(v, elem) for v in a.values]
    dims = a.type.dims

    def nest(level: int, start: int) -> tuple[str, int]:
        if level == len(dims):
            return vals[start], start + 1
        parts = []
        for _ in range(dims[level]):
            s, start = nest(level + 1, start)
            parts.append(s)
        return "[" + ", ".join(parts) + "]", start

    return nest(0, 0)[0]


def format_attribute(a: Attribute) -> str:
    """An attribute as it appears in an attr-dict (enums as their integer codes, like MLIR's generic form)."""
    if isinstance(a, IntegerAttr):
        if isinstance(a.type, IntType) and a.type.width == 1 and not a.type.signedness:
            return "true" if a.value else "false"
        return f"{a.value} : {a.type}"
    if isinstance(a, FloatAttr):
        return f"{format_float(a.value, a.type)} : {a.type}"
    if isinstance(a, BoolAttr):
        return "true" if a.value else "false"
    if isinstance(a, StringAttr):
        return _escape(a.value)
    if isinstance(a, UnitAttr):
        return "unit"
    if isinstance(a, TypeAttr):
        return str(a.type)
    if isinstance(a, SymbolRefAttr):
        return "@" + (a.name if _SUFFIX.match(a.name) else _escape(a.name))
    if isinstance(a, DenseAttr):
        return f"dense<{_dense_body(a)}> : {a.type}"
    if isinstance(a, DenseArrayAttr):
        if not a.values:
            return f"array<{a.element}>"
        return f"array<{a.element}: " + ", ".join(_scalar(v, a.element) for v in a.values) + ">"
    if isinstance(a, ArrayAttr):
        return "[" + ", ".join(format_attribute(v) for v in a.values) + "]"
    if isinstance(a, DictAttr):
        return "{" + ", ".join(_entry(k, v) for k, v in a.entries) + "}"
    if isinstance(a, OpaqueAttr):
        return a.text
    if isinstance(a, EnumAttr):
        codes = ENUM_CODES.get(type(a.value))
        if codes is None:
            raise ValueError(f"no integer code for {a.value!r}")
        return f"{codes[0][a.value]} : {codes[1]}"
    raise TypeError(f"cannot print attribute {a!r}")


def _entry(k: str, v: Attribute) -> str:
    return _key(k) if isinstance(v, UnitAttr) else f"{_key(k)} = {format_attribute(v)}"


def _loc(loc: Location | None) -> str:
    if loc is None:
        return ""
    pos = f"{_escape(loc.file)}:{loc.line}:{loc.col}"
    return f" loc({_escape(loc.name)}({pos}))" if loc.name is not None else f" loc({pos})"


def _types(ts: list[Type] | tuple[Type, ...]) -> str:
    return ", ".join(str(t) for t in ts)


def _result_types(ts: list[Type]) -> str:
    """After `->`: a lone non-function type bare, otherwise parenthesized."""
    if len(ts) == 1 and not isinstance(ts[0], FunctionType):
        return str(ts[0])
    return "(" + _types(ts) + ")"


# ---------------------------------------------------------------------------------------------------------------------


class Writer:
    """Per-module printing state: value names, indentation and output lines. Op classes printing their custom
    syntax use its helpers."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.next_id = 0
        self.indent = ""
        self.prefix: dict[Op, str] = {}  # op -> its `%results = ` text

    # -- naming -------------------------------------------------------------------------------------------------------

    def reset_names(self) -> None:
        self.names = {}
        self.used = set()
        self.next_id = 0

    def _fresh(self, name: str | None) -> str:
        if name is None or not _SUFFIX.match(name) or name.isdigit():
            while str(self.next_id) in self.used:
                self.next_id += 1
            name = str(self.next_id)
            self.next_id += 1
        elif name in self.used:
            k = 0
            while f"{name}_{k}" in self.used:
                k += 1
            name = f"{name}_{k}"
        self.used.add(name)
        return name

    def name_results(self, op: Op) -> str:
        """Assign names to `op`'s results; returns the `%a, %b = ` / `%g:2 = ` prefix."""
        rs = op.results
        if not rs:
            return ""
        first = rs[0].name
        if len(rs) == 1 or all(r.name == first for r in rs):
            group = self._fresh(first)
            for i, r in enumerate(rs):
                self.names[r] = f"%{group}" if len(rs) == 1 else f"%{group}#{i}"
            return f"%{group} = " if len(rs) == 1 else f"%{group}:{len(rs)} = "
        parts = []
        for r in rs:
            n = self._fresh(r.name)
            self.names[r] = f"%{n}"
            parts.append(f"%{n}")
        return ", ".join(parts) + " = "

    def name_args(self, block: Block) -> None:
        for a in block.args:
            self.names[a] = "%" + self._fresh(a.name)

    def prename(self, op: Op) -> None:
        """Name every value under `op` before printing, so uses ahead of definitions (across blocks) print.

        Like MLIR: a region's own values are named before those of regions nested in it, and sibling regions reuse
        names and numbers (each nested region starts from the same state and gives it back)."""
        self.prefix[op] = self.name_results(op)
        self._name_regions(op.regions)

    def _name_regions(self, regions: list[Region]) -> None:
        for region in regions:
            saved = (set(self.used), self.next_id)
            for b in region.blocks:
                self.name_args(b)
                for o in b.ops:
                    self.prefix[o] = self.name_results(o)
            for b in region.blocks:
                for o in b.ops:
                    if o.regions:
                        self._name_regions(o.regions)
            self.used, self.next_id = saved

    def v(self, value: Value) -> str:
        try:
            return self.names[value]
        except KeyError:
            raise ValueError(f"value {value!r} is used but not defined in the printed module") from None

    def vs(self, values: list[Value]) -> str:
        return ", ".join(self.v(x) for x in values)

    # -- attributes ---------------------------------------------------------------------------------------------------

    @staticmethod
    def attr_dict(attrs: dict[str, Attribute], elide: tuple[str, ...] = (), prefix: str = " ") -> str:
        items = [(k, v) for k, v in sorted(attrs.items()) if k not in elide]
        if not items:
            return ""
        return prefix + "{" + ", ".join(_entry(k, v) for k, v in items) + "}"

    # -- structure ----------------------------------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def op(self, op: Op) -> None:
        """Append `op` (custom form if it has one that fits, else generic) with its location."""
        name = op.op_name
        body = None if isinstance(op, UnknownOp) else op.print_custom(self)
        text = name + body if body is not None else _quote(name) + self.generic(op)
        self.lines.append(self.indent + self.prefix.get(op, "") + text + _loc(op.loc))

    def region(self, region: Region, print_entry_args: bool = True, omit_empty_yield: bool = False) -> str:
        """`{`, the blocks of `region` indented one level deeper, and the closing `}` at the current indent."""
        outer = self.indent
        self.indent = outer + "  "
        start = len(self.lines)
        for i, block in enumerate(region.blocks):
            if i > 0 or print_entry_args and block.args:
                args = ", ".join(f"{self.v(a)}: {a.type}{_loc(a.loc)}" for a in block.args)
                label = f"^bb{i}" + (f"({args})" if block.args else "")
                self.lines.append(outer + label + ":")
            ops = block.ops
            if omit_empty_yield and ops and _is_empty_yield(ops[-1]) and len(region.blocks) == 1:
                ops = ops[:-1]
            for o in ops:
                self.op(o)
        body = self.lines[start:]
        del self.lines[start:]
        self.indent = outer
        return "{\n" + "".join(ln + "\n" for ln in body) + outer + "}"

    def generic(self, op: Op) -> str:
        """MLIR's generic form after the quoted name: `(operands)[succ] <{props}> ({regions}) {attrs} : type`."""
        parts = ["(" + self.vs(op.operands) + ")"]
        if op.successors:
            parts.append("[" + ", ".join(self.block_ref(b) for b in op.successors) + "]")
        props = op.attr_defs
        inherent = {k: v for k, v in op.attrs.items() if k in props}
        if sum(d.kind != "single" for d in op.operand_defs) > 1:
            inherent["operandSegmentSizes"] = DenseArrayAttr(IntType(32), tuple(op.operand_segments()))
        if inherent:
            parts.append(" <" + self.attr_dict(inherent, prefix="") + ">")
        if op.regions:
            parts.append(" (" + ", ".join(self.region(r) for r in op.regions) + ")")
        parts.append(self.attr_dict({k: v for k, v in op.attrs.items() if k not in props}))
        ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
        parts.append(f" : {ft}")
        return "".join(parts)

    def block_ref(self, block: Block) -> str:
        region = block.parent
        index = region.blocks.index(block) if region is not None and block in region.blocks else 0
        return f"^bb{index}"

    # -- pieces of custom syntax -----------------------------------------------------------------------------------

    format_of = staticmethod(format_of)
    attr = staticmethod(format_attribute)
    string = staticmethod(_escape)
    types = staticmethod(_types)

    @staticmethod
    def loc(loc: Location | None) -> str:
        return _loc(loc)

    @staticmethod
    def sym(name: str) -> str:
        return name if _SUFFIX.match(name) else _escape(name)


def _quote(name: str) -> str:
    return '"' + name + '"'


def _is_empty_yield(op: Op) -> bool:
    return op.implicit_terminator and not op.operands and not op.attrs


# ---------------------------------------------------------------------------------------------------------------------


def print_module(module: Module) -> str:
    """The module as TTIR text (deterministic; `parse_ttir` reads it back to an equivalent module)."""
    w = Writer()
    head = "module"
    sym = module.attrs.get("sym_name")
    if isinstance(sym, StringAttr):
        head += f" @{Writer.sym(sym.value)}"
    head += w.attr_dict(module.attrs, ("sym_name",), prefix=" attributes ")
    w.lines.append(head + " {")
    w.indent = "  "
    for op in module.ops:
        w.reset_names()
        w.prename(op)
        w.op(op)
    w.indent = ""
    w.lines.append("}" + _loc(module.loc))
    return "\n".join(w.lines) + "\n"


def print_op(op: Op) -> str:
    """One op (with its regions) as text, for messages; values defined outside it are named as if they were not."""
    w = Writer()
    w.prename(op)
    for o in op.walk():
        for v in o.operands:
            if v not in w.names:
                w.names[v] = "%" + w._fresh(v.name)
    w.op(op)
    return "\n".join(w.lines)
