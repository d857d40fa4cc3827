"""Printer of the SDK IR as MLIR-like TTIR text that `parse_ttir` reads back to an equivalent module.

Custom forms follow Triton's own spelling (`PRINTERS`, keyed by op name); other ops print in MLIR's generic form, which
the reader always accepts. Locations print inline (`loc("x"("file.py":12:5))`) so that they survive a round trip.

Naming is deterministic: a value keeps its name (suffixed `_0`, `_1`, ... where needed to be unique within its
top-level op); unnamed values are numbered `%0`, `%1`, ... in textual order. A multi-result op whose results share
one name (or none) prints as a group `%x:2` used as `%x#1`; otherwise as `%a, %b = ...`.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable

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
from .core import Block, Location, Module, Op, Region, Value
from .enums import EnumAttr
from .ops import OP_CLASSES
from .reader import ENUM_CODES, round_float
from .types import FloatKind, FloatType, FunctionType, IntType, PointerType, TensorDescType, TensorType, Type

__all__ = ["PRINTERS", "format_attribute", "format_float", "print_module", "print_op"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_SUFFIX = re.compile(r"[A-Za-z_$.\-][A-Za-z0-9_$.\-]*\Z")


def _escape(s: str) -> str:
    """LLVM's printEscapedString: printable ASCII verbatim except `"` and `\\`, everything else as `\\XX`."""
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
    """Per-module printing state: value names, indentation and output lines. `PRINTERS` functions use its helpers."""

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
        printer = PRINTERS.get(name)
        body = printer(self, op) if printer is not None else None
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
        props = _PROPERTIES.get(op.op_name, ())
        inherent = {k: v for k, v in op.attrs.items() if k in props}
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

    def successor(self, block: Block, args: list[Value]) -> str:
        if not args:
            return self.block_ref(block)
        return f"{self.block_ref(block)}({self.vs(args)} : {_types([a.type for a in args])})"


def _quote(name: str) -> str:
    return '"' + name + '"'


def _is_empty_yield(op: Op) -> bool:
    return op.op_name == "scf.yield" and not op.operands and not op.attrs


#: inherent attributes printed as properties `<{...}>` in the generic form (how Triton spells its generic ops)
_PROPERTIES: dict[str, tuple[str, ...]] = {
    "tt.reduce": ("axis",),
    "tt.scan": ("axis", "reverse"),
}

# ---------------------------------------------------------------------------------------------------------------------
# Custom forms: op -> text after the op name (without location), or None to fall back to the generic form.

OpPrinter = Callable[[Writer, Op], "str | None"]


def _p_same(w: Writer, op: Op) -> str | None:
    if len(op.results) != 1:
        return None
    return f" {w.vs(op.operands)}{_fastmath(op)}{w.attr_dict(op.attrs, ('fastmath',))} : {op.results[0].type}"


def _fastmath(op: Op) -> str:
    fm = op.attrs.get("fastmath")
    if isinstance(fm, OpaqueAttr) and fm.text.startswith("#arith.fastmath<"):
        return " fastmath" + fm.text[len("#arith.fastmath") :]
    return ""


def _p_cast(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    src = op.operands[0]
    return f" {w.v(src)}{_fastmath(op)}{w.attr_dict(op.attrs, ('fastmath',))} : {src.type} to {op.results[0].type}"


def _kw(op: Op, names: tuple[str, ...]) -> str:
    """`, name = keyword` for enum attributes printed inline (Triton's custom formats)."""
    out = ""
    for n in names:
        a = op.attrs.get(n)
        if isinstance(a, EnumAttr):
            out += f", {n} = {a.value.value}"
    return out


def _p_arrow(units: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> OpPrinter:
    def p(w: Writer, op: Op) -> str | None:
        if (
            not op.results
            or not op.operands
            or any(not isinstance(op.attrs.get(k), EnumAttr) for k in after if k in op.attrs)
        ):
            return None
        flags = "".join(f" {u}" for u in units if isinstance(op.attrs.get(u), UnitAttr))
        res = op.results[0].type
        if any(r.type != res for r in op.results):
            return None
        src_types = [op.operands[0].type] if op.op_name in _ONE_TYPE else [v.type for v in op.operands]
        return (
            f" {w.vs(op.operands)}{flags}{w.attr_dict(op.attrs, units + after)}{_kw(op, after)} : "
            f"{_types(src_types)} -> {res}"
        )

    return p


#: arrow-form ops that print only the first operand's type (`tt.cat %a, %b : T -> R`, `tt.histogram %x, %mask : ...`)
_ONE_TYPE = {"tt.cat", "tt.join", "tt.histogram"}


def _p_functional(w: Writer, op: Op) -> str | None:
    ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
    return f" {w.vs(op.operands)}{w.attr_dict(op.attrs)} : {ft}"


def _p_unsplat(w: Writer, op: Op) -> str | None:
    return f" {w.v(op.operands[0])}{w.attr_dict(op.attrs)} : {op.operands[0].type}"


def _p_cmp(w: Writer, op: Op) -> str | None:
    pred = op.attrs.get("predicate")
    if not isinstance(pred, EnumAttr) or len(op.operands) != 2:
        return None
    return (
        f" {pred.value.value}, {w.vs(op.operands)}{_fastmath(op)}"
        f"{w.attr_dict(op.attrs, ('predicate', 'fastmath'))} : {op.operands[0].type}"
    )


def _p_select(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 3:
        return None
    cond, res = op.operands[0].type, op.results[0].type
    types = f"{res}" if not isinstance(cond, TensorType) else f"{cond}, {res}"
    return f" {w.vs(op.operands)}{w.attr_dict(op.attrs)} : {types}"


def _p_constant(w: Writer, op: Op) -> str | None:
    value = op.attrs.get("value")
    rest = w.attr_dict(op.attrs, ("value",))
    if isinstance(value, IntegerAttr) and isinstance(value.type, IntType) and value.type.width == 1:
        return f"{rest} {'true' if value.value else 'false'}"
    if isinstance(value, (IntegerAttr, FloatAttr, DenseAttr)):
        return f"{rest} {format_attribute(value)}"
    return None


def _p_program_dim(w: Writer, op: Op) -> str | None:
    axis = op.attrs.get("axis")
    if not isinstance(axis, EnumAttr):
        return None
    return f" {axis.value.value}{w.attr_dict(op.attrs, ('axis',))} : {op.results[0].type}"


def _p_attrs_type(w: Writer, op: Op) -> str | None:
    """`attr-dict : T` (tt.make_range)."""
    if op.operands or len(op.results) != 1:
        return None
    return f"{w.attr_dict(op.attrs)} : {op.results[0].type}"


_CACHE_KWS = (("cache", "cacheModifier"), ("evict", "evictionPolicy"))


def _cache_kws(op: Op) -> str:
    """3.7 spelling of cache hints: ` cacheModifier = cg evictionPolicy = evict_last`."""
    out = ""
    for attr, kw in _CACHE_KWS:
        a = op.attrs.get(attr)
        if isinstance(a, EnumAttr):
            out += f" {kw} = {a.value.value}"
    return out


def _p_load(w: Writer, op: Op) -> str | None:
    if not 1 <= len(op.operands) <= 3:
        return None
    return f" {w.vs(op.operands)}{_cache_kws(op)}{w.attr_dict(op.attrs, ('cache', 'evict'))} : {op.operands[0].type}"


def _p_store(w: Writer, op: Op) -> str | None:
    if not 2 <= len(op.operands) <= 3:
        return None
    return f" {w.vs(op.operands)}{_cache_kws(op)}{w.attr_dict(op.attrs, ('cache', 'evict'))} : {op.operands[0].type}"


def _p_addptr(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 2:
        return None
    return f" {w.vs(op.operands)}{w.attr_dict(op.attrs)} : {op.results[0].type}, {op.operands[1].type}"


def _p_atomic(prefix: tuple[str, ...], tail: str) -> OpPrinter:
    def p(w: Writer, op: Op) -> str | None:
        kws = [op.attrs.get(k) for k in prefix]
        if not all(isinstance(k, EnumAttr) for k in kws):
            return None
        head = "".join(f" {k.value.value}," for k in kws)  # type: ignore[union-attr]
        rest = w.attr_dict(op.attrs, prefix)
        if tail == "functional":
            ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
            return f"{head} {w.vs(op.operands)}{rest} : {ft}"
        return f"{head} {w.vs(op.operands)}{rest} : {op.operands[0].type}"

    return p


def _p_atomic_poll(w: Writer, op: Op) -> str | None:
    sem, scope = op.attrs.get("sem"), op.attrs.get("scope")
    if not isinstance(sem, EnumAttr) or not isinstance(scope, EnumAttr) or len(op.operands) not in (2, 3):
        return None
    timeout = f" timeout {w.v(op.operands[2])}" if len(op.operands) == 3 else ""
    return (
        f" {sem.value.value}, {scope.value.value}, {w.vs(op.operands[:2])}{timeout}"
        f"{w.attr_dict(op.attrs, ('sem', 'scope'))} : {op.operands[0].type}, {op.operands[1].type} -> "
        f"{op.results[0].type}"
    )


def _p_dot(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 3:
        return None
    a, b, _ = op.operands
    return (
        f" {w.vs(op.operands)}{_kw(op, ('inputPrecision',))}{w.attr_dict(op.attrs, ('inputPrecision',))} : "
        f"{a.type} * {b.type} -> {op.results[0].type}"
    )


def _p_clampf(w: Writer, op: Op) -> str | None:
    if not isinstance(op.attrs.get("propagateNan"), EnumAttr):
        return None
    return (
        f" {w.vs(op.operands)}{_kw(op, ('propagateNan',))}{w.attr_dict(op.attrs, ('propagateNan',))} : "
        f"{op.results[0].type}"
    )


def _p_gather(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 2:
        return None
    ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
    return f" {w.v(op.operands[0])}[{w.v(op.operands[1])}]{w.attr_dict(op.attrs)} : {ft}"


def _p_inline_asm(w: Writer, op: Op) -> str | None:
    asm = op.attrs.get("asm_string")
    if not isinstance(asm, StringAttr) or not op.results:
        return None
    args = f" {w.vs(op.operands)} : {_types([v.type for v in op.operands])}" if op.operands else ""
    return (
        f" {_escape(asm.value)}{w.attr_dict(op.attrs, ('asm_string',))}{args} -> "
        f"{_result_types([r.type for r in op.results])}"
    )


def _p_print(w: Writer, op: Op) -> str | None:
    prefix = op.attrs.get("prefix")
    if not isinstance(prefix, StringAttr):
        return None
    args = f" : {w.vs(op.operands)} : {_types([v.type for v in op.operands])}" if op.operands else ""
    return f" {_escape(prefix.value)}{w.attr_dict(op.attrs, ('prefix',))}{args}"


def _p_assert(typed: bool) -> OpPrinter:
    def p(w: Writer, op: Op) -> str | None:
        msg = op.attrs.get("message")
        if not isinstance(msg, StringAttr) or len(op.operands) != 1:
            return None
        t = f" : {op.operands[0].type}" if typed else ""
        return f" {w.v(op.operands[0])}, {_escape(msg.value)}{w.attr_dict(op.attrs, ('message',))}{t}"

    return p


def _short(t: Type) -> str:
    """`!tt.ptr<f32>` -> `<f32>`: make_tensor_descriptor's format elides the dialect prefix of its types."""
    s = str(t)
    return s[s.index("<") :] if isinstance(t, (PointerType, TensorDescType)) else s


def _p_make_tensor_descriptor(w: Writer, op: Op) -> str | None:
    n = len(op.operands) - 1
    if n < 2 or n % 2:
        return None
    base, shape, strides = op.operands[0], op.operands[1 : 1 + n // 2], op.operands[1 + n // 2 :]
    return (
        f" {w.v(base)}, [{w.vs(shape)}], [{w.vs(strides)}]{w.attr_dict(op.attrs)} : {_short(base.type)}, "
        f"{_short(op.results[0].type)}"
    )


def _p_descriptor_load(w: Writer, op: Op) -> str | None:
    desc, idx = op.operands[0], op.operands[1:]
    return f" {w.v(desc)}[{w.vs(idx)}]{w.attr_dict(op.attrs)} : {desc.type} -> {op.results[0].type}"


def _descriptor_store_body(w: Writer, op: Op, elide: tuple[str, ...] = ()) -> str | None:
    if len(op.operands) < 2:
        return None
    desc, src, idx = op.operands[0], op.operands[1], op.operands[2:]  # MLIR order: desc, src, *indices
    return f" {w.v(desc)}[{w.vs(idx)}], {w.v(src)}{w.attr_dict(op.attrs, elide)} : {desc.type}, {src.type}"


def _p_descriptor_store(w: Writer, op: Op) -> str | None:
    return _descriptor_store_body(w, op)


def _p_descriptor_reduce(w: Writer, op: Op) -> str | None:
    kind = op.attrs.get("kind")
    body = _descriptor_store_body(w, op, ("kind",))
    if not isinstance(kind, OpaqueAttr) or body is None:
        return None
    return f" {kind.text}," + body


def _p_call(w: Writer, op: Op) -> str | None:
    callee = op.attrs.get("callee")
    if not isinstance(callee, SymbolRefAttr):
        return None
    ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
    return f" {format_attribute(callee)}({w.vs(op.operands)}){w.attr_dict(op.attrs, ('callee',))} : {ft}"


def _p_return_like(w: Writer, op: Op) -> str | None:
    if op.results:
        return None
    vals = f" {w.vs(op.operands)} : {_types([v.type for v in op.operands])}" if op.operands else ""
    return f"{w.attr_dict(op.attrs)}{vals}"


_FUNC_ATTRS = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")


def _p_func(w: Writer, op: Op) -> str | None:
    name, ftype = op.attrs.get("sym_name"), op.attrs.get("function_type")
    if not isinstance(name, StringAttr) or not isinstance(ftype, TypeAttr) or not isinstance(ftype.type, FunctionType):
        return None
    ft = ftype.type
    vis = op.attrs.get("sym_visibility")
    head = f" {vis.value}" if isinstance(vis, StringAttr) else ""
    arg_attrs = op.attrs.get("arg_attrs")
    res_attrs = op.attrs.get("res_attrs")

    def extra(arr: Attribute | None, i: int) -> str:
        if (
            isinstance(arr, ArrayAttr)
            and i < len(arr.values)
            and isinstance(arr.values[i], DictAttr)
            and arr.values[i].entries
        ):
            return " " + format_attribute(arr.values[i])
        return ""

    body = op.regions[0] if op.regions else None
    entry = body.blocks[0] if body is not None and body.blocks else None
    if entry is not None:
        if len(entry.args) != len(ft.inputs):
            return None
        args = ", ".join(f"{w.v(a)}: {a.type}{extra(arg_attrs, i)}{_loc(a.loc)}" for i, a in enumerate(entry.args))
    else:
        args = ", ".join(f"{t}{extra(arg_attrs, i)}" for i, t in enumerate(ft.inputs))
    text = f"{head} @{_sym(name.value)}({args})"
    if ft.results:
        if len(ft.results) == 1 and not extra(res_attrs, 0):
            text += f" -> {ft.results[0]}"
        else:
            text += " -> (" + ", ".join(f"{t}{extra(res_attrs, i)}" for i, t in enumerate(ft.results)) + ")"
    text += w.attr_dict(op.attrs, _FUNC_ATTRS, prefix=" attributes ")
    if entry is not None:
        text += " " + w.region(body, print_entry_args=False)  # type: ignore[arg-type]
    return text


def _sym(name: str) -> str:
    return name if _SUFFIX.match(name) else _escape(name)


def _p_for(w: Writer, op: Op) -> str | None:
    if len(op.operands) < 3 or len(op.regions) != 1 or not op.regions[0].blocks:
        return None
    body = op.regions[0].blocks[0]
    if len(body.args) != len(op.operands) - 2:
        return None
    iv, iters = body.args[0], body.args[1:]
    lb, ub, step = op.operands[:3]
    text = " unsigned" if isinstance(op.attrs.get("unsignedCmp"), UnitAttr) else ""
    text += f" {w.v(iv)} = {w.v(lb)} to {w.v(ub)} step {w.v(step)}"
    if iters:
        pairs = ", ".join(f"{w.v(a)} = {w.v(x)}" for a, x in zip(iters, op.operands[3:]))
        text += f" iter_args({pairs}) -> ({_types([r.type for r in op.results])})"
    text += f"  : {iv.type}" if str(iv.type) != "index" else ""
    text += " " + w.region(op.regions[0], print_entry_args=False, omit_empty_yield=not op.results)
    return text + w.attr_dict(op.attrs, ("unsignedCmp",))


def _p_if(w: Writer, op: Op) -> str | None:
    if len(op.operands) != 1 or len(op.regions) != 2:
        return None
    text = f" {w.v(op.operands[0])}"
    if op.results:
        text += f" -> ({_types([r.type for r in op.results])})"
    text += " " + w.region(op.regions[0], omit_empty_yield=not op.results)
    if op.regions[1].blocks:
        text += " else " + w.region(op.regions[1], omit_empty_yield=not op.results)
    return text + w.attr_dict(op.attrs)


def _p_while(w: Writer, op: Op) -> str | None:
    if len(op.regions) != 2 or not op.regions[0].blocks or not op.regions[1].blocks:
        return None
    before = op.regions[0].blocks[0]
    if len(before.args) != len(op.operands):
        return None
    text = ""
    if op.operands:
        text += " (" + ", ".join(f"{w.v(a)} = {w.v(x)}" for a, x in zip(before.args, op.operands)) + ")"
    ft = FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
    text += f" : {_paren_ft(ft)} " + w.region(op.regions[0], print_entry_args=False)
    text += " do " + w.region(op.regions[1])
    return text + w.attr_dict(op.attrs)


def _paren_ft(ft: FunctionType) -> str:
    """scf.while always parenthesizes its result types: `(i32, f32) -> (i32, f32)`, `() -> ()`."""
    return f"({_types(ft.inputs)}) -> ({_types(ft.results)})"


def _p_condition(w: Writer, op: Op) -> str | None:
    if not op.operands:
        return None
    args = op.operands[1:]
    rest = f" {w.vs(args)} : {_types([a.type for a in args])}" if args else ""
    return f"({w.v(op.operands[0])}){w.attr_dict(op.attrs)}{rest}"


def _p_br(w: Writer, op: Op) -> str | None:
    if len(op.successors) != 1:
        return None
    return f" {w.successor(op.successors[0], op.operands)}{w.attr_dict(op.attrs)}"


def _p_cond_br(w: Writer, op: Op) -> str | None:
    seg = op.attrs.get("operandSegmentSizes")
    if len(op.successors) != 2 or not isinstance(seg, DenseArrayAttr) or len(seg.values) != 3:
        return None
    _, n_true, n_false = seg.values
    t_args = op.operands[1 : 1 + n_true]
    f_args = op.operands[1 + n_true : 1 + n_true + n_false]
    return (
        f" {w.v(op.operands[0])}, {w.successor(op.successors[0], t_args)}, "
        f"{w.successor(op.successors[1], f_args)}{w.attr_dict(op.attrs, ('operandSegmentSizes',))}"
    )


def _p_reduce_like(w: Writer, op: Op) -> str | None:
    return None  # Triton prints tt.reduce / tt.scan in the generic form


#: op name -> printer of its custom form
PRINTERS: dict[str, OpPrinter] = {
    "tt.func": _p_func,
    "tt.call": _p_call,
    "tt.return": _p_return_like,
    "tt.get_program_id": _p_program_dim,
    "tt.get_num_programs": _p_program_dim,
    "tt.make_range": _p_attrs_type,
    "tt.splat": _p_arrow(),
    "tt.unsplat": _p_unsplat,
    "tt.broadcast": _p_arrow(),
    "tt.expand_dims": _p_arrow(),
    "tt.reshape": _p_arrow(units=("allow_reorder", "efficient_layout")),
    "tt.trans": _p_arrow(),
    "tt.join": _p_arrow(),
    "tt.split": _p_arrow(),
    "tt.cat": _p_arrow(),
    "tt.bitcast": _p_arrow(),
    "tt.int_to_ptr": _p_arrow(),
    "tt.ptr_to_int": _p_arrow(),
    "tt.fp_to_fp": _p_arrow(after=("rounding",)),
    "tt.histogram": _p_arrow(),
    "tt.gather": _p_gather,
    "tt.addptr": _p_addptr,
    "tt.load": _p_load,
    "tt.store": _p_store,
    "tt.atomic_rmw": _p_atomic(("atomic_rmw_op", "sem", "scope"), "functional"),
    "tt.atomic_cas": _p_atomic(("sem", "scope"), "functional"),
    "tt.atomic_load": _p_atomic(("sem", "scope"), "functional"),
    "tt.atomic_store": _p_atomic(("sem", "scope"), "ptr"),
    "tt.atomic_poll": _p_atomic_poll,
    "tt.dot": _p_dot,
    "tt.clampf": _p_clampf,
    "tt.precise_sqrt": _p_same,
    "tt.precise_divf": _p_same,
    "tt.approx_divf": _p_same,
    "tt.mulhiui": _p_same,
    "tt.extern_elementwise": _p_functional,
    "tt.elementwise_inline_asm": _p_inline_asm,
    "tt.print": _p_print,
    "tt.assert": _p_assert(typed=True),
    "tt.make_tensor_descriptor": _p_make_tensor_descriptor,
    "tt.descriptor_load": _p_descriptor_load,
    "tt.descriptor_store": _p_descriptor_store,
    "tt.descriptor_reduce": _p_descriptor_reduce,
    "tt.reduce": _p_reduce_like,
    "tt.scan": _p_reduce_like,
    "tt.reduce.return": _p_return_like,
    "tt.scan.return": _p_return_like,
    "arith.constant": _p_constant,
    "arith.cmpi": _p_cmp,
    "arith.cmpf": _p_cmp,
    "arith.select": _p_select,
    "math.fma": _p_same,
    "scf.for": _p_for,
    "scf.if": _p_if,
    "scf.while": _p_while,
    "scf.condition": _p_condition,
    "scf.yield": _p_return_like,
    "cf.br": _p_br,
    "cf.cond_br": _p_cond_br,
    "cf.assert": _p_assert(typed=False),
}


def _register_families() -> None:
    from .ops import CastOp, FloatBinaryOp, FloatUnaryOp, IntBinaryOp, UnaryOp

    for name, cls in OP_CLASSES.items():
        if name in PRINTERS:
            continue
        if issubclass(cls, CastOp):
            PRINTERS[name] = _p_cast if name.startswith("arith.") else _p_arrow()
        elif issubclass(cls, (IntBinaryOp, FloatBinaryOp, FloatUnaryOp, UnaryOp)):
            PRINTERS[name] = _p_same


_register_families()

# ---------------------------------------------------------------------------------------------------------------------


def print_module(module: Module) -> str:
    """The module as TTIR text (deterministic; `parse_ttir` reads it back to an equivalent module)."""
    w = Writer()
    head = "module"
    sym = module.attrs.get("sym_name")
    if isinstance(sym, StringAttr):
        head += f" @{_sym(sym.value)}"
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
