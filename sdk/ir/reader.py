"""Reader of Triton's TTIR text (what `compiled.asm["ttir"]` prints, Triton 3.7 and 3.9) into the SDK IR.

A hand-written scanner and recursive-descent parser for MLIR's generic structure (results, regions, blocks, attributes,
types, locations). An op's custom syntax is read by its class (`Op.parse_custom`: the class's `assembly_format`, see
`syntax.py`, or its own method); ops without a class or a format are read in MLIR's generic form
(`"name"(...) <{...}> ({...}) {...} : (...) -> ...`) when printed that way, else with the default custom form
`operands attr-dict : types`. An op whose syntax cannot be read raises `TTIRParseError` naming the op, line and column.

Representation decisions (see also the printer):
- SSA names are kept verbatim (`%x_5` -> "x_5", `%c-1_i64` -> "c-1_i64"); MLIR's numeric names (`%0`) become None.
  A multi-result group `%cnt:2` names each result "cnt".
- Locations: `loc(#locN)` aliases (also forward ones printed after the module) are resolved; `callsite(a at b)` resolves
  to the caller `b` (recursively: the user's kernel line); `"x"(inner)` gives `inner` with `name="x"`; `fused[...]`
  the first known one; `unknown` gives None. Block arguments without a printed location (e.g. `scf.for` induction
  variables) and implicit terminators take their op's location.
- Enum-valued attributes (the class's `EnumProp` fields) become `EnumAttr` whichever spelling was read (keyword in
  the custom form, integer in the generic form or an attr-dict). 3.9's `cachePolicy` stays an
  `OpaqueAttr`; `Load.cache_modifier` reads both spellings. Arith `fastmath<...>` is kept as
  `OpaqueAttr("#arith.fastmath<...>")` under "fastmath".
- Float constants are Python floats rounded to their type's precision (`0.1 : f32` -> 0.10000000149011612); hex
  spellings are bit patterns (`0xFF800000 : f32` -> -inf). Integers are signless bit patterns read back as signed
  (`255 : i8` -> -1), except i1 (0/1) and index.
- `operandSegmentSizes` of a declared op becomes its `segment_sizes` (how its operands fill its operand fields; the
  custom syntax gives them too); unknown ops keep it as an attribute.
- Empty implicit `scf.yield`s (result-less `scf.if`/`scf.for` regions) are inserted, so every block has a terminator.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

from ..numerics import bf16_value
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
from .core import OP_CLASSES, Block, BlockArgument, Location, Module, Op, Region, UnknownOp, Value
from .ops import Op as _Op  # noqa: F401  (loads every dialect's op classes into OP_CLASSES)
from .syntax import DEFAULT, format_of
from .types import (
    FloatKind,
    FloatType,
    FunctionType,
    IndexType,
    IntType,
    NoneType,
    OpaqueType,
    PointerType,
    TensorDescType,
    TensorType,
    Type,
)

__all__ = ["TTIRParseError", "parse_attribute", "parse_ttir", "parse_type"]


class TTIRParseError(ValueError):
    """A TTIR syntax error: names the op being read (if any), the 1-based line and column, and the offending text."""

    def __init__(self, message: str, line: int, col: int, op: str | None = None, text: str = "") -> None:
        self.message = message
        self.line = line
        self.col = col
        self.op = op
        self.text = text
        where = f"line {line}, column {col}" + (f" (in {op})" if op else "")
        super().__init__(f"{where}: {message}" + (f": {text!r}" if text else ""))


# ---------------------------------------------------------------------------------------------------------------------
# Lexical patterns (anchored at a position with .match(text, pos)).

_WS = re.compile(r"(?:\s+|//[^\n]*)*")
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_SUFFIX = r"[A-Za-z0-9_$.\-]+"
_VALUE = re.compile(r"%(" + _SUFFIX + r")(?:#(\d+))?")
_BLOCK = re.compile(r"\^(" + _SUFFIX + r")")
_SYMBOL = re.compile(r'@(?:"((?:[^"\\]|\\.)*)"|(' + _SUFFIX + r"))")
_HASH = re.compile(r"#(" + _SUFFIX + r")")
#: an attribute alias named inside an opaque attribute's body (a dialect attribute there has its own `<...>`)
_ALIAS_REF = re.compile(r"#(" + _SUFFIX + r")(?![<\w$.\-])")
_BANG = re.compile(r"!(" + _SUFFIX + r")")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_NUMBER = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|inf|nan)")
_INT = re.compile(r"[-+]?\d+")
_DIMS = re.compile(r"(?:(?:\d+|\?)x)*")
_INT_TYPE = re.compile(r"([su]?)i(\d+)(?![A-Za-z0-9_$.])")
_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
_FLOAT_KINDS = {k.value: k for k in FloatKind}
_TYPE_START = re.compile(r"(?:[su]?i\d|f\d|bf16|tf32|index\b|none\b|tensor<|vector<|memref<|complex<|tuple<|!|\()")


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _ESCAPES.get(m.group(2), m.group(2)), s)


# ---------------------------------------------------------------------------------------------------------------------
# Numeric helpers shared with the printer


def float_from_bits(bits: int, t: Type) -> float:
    """Decode an IEEE bit pattern of float type `t` (how MLIR spells inf/nan and inexact constants)."""
    kind = t.kind if isinstance(t, FloatType) else None
    if kind in (FloatKind.F32, FloatKind.TF32):
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if kind == FloatKind.F64:
        return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]
    if kind == FloatKind.F16:
        return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
    if kind == FloatKind.BF16:
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    raise ValueError(f"hex float literals of type {t} are not supported")


def round_float(v: float, t: Type) -> float:
    """`v` rounded to the precision of float type `t` (f32/f16/bf16 constants are exact values of that type)."""
    kind = t.kind if isinstance(t, FloatType) else None
    if kind is None or kind == FloatKind.F64 or not math.isfinite(v):
        return v
    try:
        if kind in (FloatKind.F32, FloatKind.TF32):
            return struct.unpack("<f", struct.pack("<f", v))[0]
        if kind == FloatKind.F16:
            return struct.unpack("<e", struct.pack("<e", v))[0]
        if kind == FloatKind.BF16:
            return bf16_value(v)
    except OverflowError:
        return math.copysign(math.inf, v)
    return v


def signless(v: int, t: Type) -> int:
    """An integer literal of type `t` as MLIR keeps it: a bit pattern, read back as signed (i1 stays 0/1)."""
    if not isinstance(t, IntType) or t.width == 1 and not t.signedness:
        return v & 1 if isinstance(t, IntType) else v
    v &= (1 << t.width) - 1
    if t.signedness != "u" and v >= 1 << (t.width - 1):
        v -= 1 << t.width
    return v


# ---------------------------------------------------------------------------------------------------------------------
# Parse-time state


class _Forward(Value):
    """Placeholder for a value used before its definition (only legal across blocks of one region)."""

    __slots__ = ("pos",)

    def __init__(self, type: Type, name: str, pos: int) -> None:
        super().__init__(type, name)
        self.pos = pos


class _Scope:
    """Names visible in one region: SSA groups, forward references and block labels."""

    __slots__ = ("blocks", "forward", "values")

    def __init__(self) -> None:
        self.values: dict[str, list[Value]] = {}
        self.forward: dict[tuple[str, int], _Forward] = {}
        self.blocks: dict[str, tuple[Block, int | None]] = {}  # label -> (block, position of first use if undefined)


class OpState:
    """What an op's syntax fills in while reading one op."""

    __slots__ = (
        "attrs",
        "groups",
        "inherit",
        "n_results",
        "name",
        "operands",
        "regions",
        "result_types",
        "segments",
        "succ",
        "successors",
        "types",
    )

    def __init__(self, name: str, n_results: int) -> None:
        self.name = name
        self.n_results = n_results
        self.operands: list[Value] = []
        self.result_types: list[Type] = []
        self.attrs: dict[str, Attribute] = {}
        self.regions: list[Region] = []
        self.successors: list[Block] = []
        #: by field name: the operands, the types the text spells, the successors (see `syntax.Format`)
        self.groups: dict[str, list[Value]] = {}
        self.types: dict[str, list[Type]] = {}
        self.succ: dict[str, Block] = {}
        self.segments: tuple[int, ...] | None = None
        #: block arguments / ops without their own printed location; they take the op's
        self.inherit: list[BlockArgument | Op] = []


LocExpr = Any  # Location | None | tuple describing an unresolved location
_INHERIT = object()

# ---------------------------------------------------------------------------------------------------------------------


class Parser:
    """Scanner + recursive-descent reader. Op classes reading their custom syntax call its public helpers."""

    #: `opt_loc()` when no location is printed: the block argument or op takes its op's location
    INHERIT = _INHERIT

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.scopes: list[_Scope] = []
        self.loc_aliases: dict[str, tuple[LocExpr, int]] = {}
        self.attr_aliases: dict[str, Attribute] = {}
        self.type_aliases: dict[str, Type] = {}
        self.pending_locs: list[tuple[Any, LocExpr]] = []
        self.inherit_locs: list[tuple[list[Any], Op]] = []
        self.current_op: str | None = None
        self._resolved: dict[str, Location | None] = {}

    # -- errors -------------------------------------------------------------------------------------------------------

    def error(self, message: str, pos: int | None = None) -> TTIRParseError:
        pos = self._skip() if pos is None else pos  # point at the offending token, not the space before it
        line = self.text.count("\n", 0, pos) + 1
        line_start = self.text.rfind("\n", 0, pos) + 1
        line_end = self.text.find("\n", pos)
        snippet = self.text[pos : line_end if line_end >= 0 else len(self.text)].strip()[:80]
        return TTIRParseError(message, line, pos - line_start + 1, self.current_op, snippet)

    # -- scanning -----------------------------------------------------------------------------------------------------

    # Probes (`peek`, `at`, `accept`, `match`, ... when they fail) never move `pos`, so a format can tell whether
    # its op ended at the end of a line.

    def ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()

    def _skip(self) -> int:
        return _WS.match(self.text, self.pos).end()

    def peek(self) -> str:
        i = self._skip()
        return self.text[i : i + 1]

    def at(self, s: str) -> bool:
        return self.text.startswith(s, self._skip())

    def accept(self, s: str) -> bool:
        i = self._skip()
        if self.text.startswith(s, i):
            self.pos = i + len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.accept(s):
            raise self.error(f"expected {s!r}")

    def match(self, rx: re.Pattern[str]) -> re.Match[str] | None:
        m = rx.match(self.text, self._skip())
        if m:
            self.pos = m.end()
        return m

    def peek_keyword(self) -> str | None:
        m = _BARE.match(self.text, self._skip())
        return m.group(0) if m else None

    def accept_keyword(self, word: str) -> bool:
        m = _BARE.match(self.text, self._skip())
        if m and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def keyword(self) -> str:
        m = self.match(_BARE)
        if not m:
            raise self.error("expected a keyword")
        return m.group(0)

    def expect_keyword(self, word: str) -> None:
        if not self.accept_keyword(word):
            raise self.error(f"expected {word!r}")

    def string(self) -> str:
        m = self.match(_STRING)
        if not m:
            raise self.error("expected a string")
        return _unescape(m.group(1))

    def integer(self) -> int:
        m = self.match(_INT)
        if not m:
            raise self.error("expected an integer")
        return int(m.group(0))

    def symbol(self) -> str:
        m = self.match(_SYMBOL)
        if not m:
            raise self.error("expected a symbol (@name)")
        return _unescape(m.group(1)) if m.group(1) is not None else m.group(2)

    def _expand_aliases(self, body: str) -> str:
        """An opaque attribute's body with the attribute aliases it names replaced by their text, so that its meaning
        does not depend on the module's alias table (`#llvm.loop_annotation<licm = #loop_licm>`)."""

        def sub(m: re.Match[str]) -> str:
            a = self.attr_aliases.get(m.group(1))
            return a.text if isinstance(a, OpaqueAttr) else m.group(0)

        return _ALIAS_REF.sub(sub, body)

    def balanced(self, open_: str = "<", close: str = ">") -> str:
        """Raw text of a balanced `<...>` (opaque dialect attributes and types), brackets included."""
        self.ws()
        start = self.pos
        if not self.text.startswith(open_, start):
            raise self.error(f"expected {open_!r}")
        depth, i, text = 0, start, self.text
        while i < len(text):
            c = text[i]
            if c == '"':
                m = _STRING.match(text, i)
                if not m:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if c in "<([{":
                depth += 1
            elif c in ">)]}":
                if c == ">" and i > 0 and text[i - 1] == "-":  # an arrow inside, e.g. a function type
                    i += 1
                    continue
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return text[start : i + 1]
            i += 1
        raise self.error(f"unbalanced {open_!r}", start)

    def at_op_end(self) -> bool:
        """True where an op may end: at a line end, before its `loc(...)`, or before a closing brace."""
        i = self._skip()
        return i >= len(self.text) or "\n" in self.text[self.pos : i] or self.text.startswith(("loc(", "}"), i)

    # -- SSA values ---------------------------------------------------------------------------------------------------

    def lookup(self, name: str, index: int, pos: int, type_hint: Type | None = None) -> Value:
        for scope in reversed(self.scopes):
            group = scope.values.get(name)
            if group is not None:
                if index >= len(group):
                    raise self.error(f"%{name} has only {len(group)} result(s), #{index} used", pos)
                return group[index]
        key = (name, index)
        for scope in reversed(self.scopes):
            if key in scope.forward:
                return scope.forward[key]
        fwd = _Forward(type_hint or NoneType(), name, pos)
        self.scopes[-1].forward[key] = fwd
        return fwd

    def define(self, name: str, values: list[Value], pos: int) -> None:
        scope = self.scopes[-1]
        if name in scope.values:
            raise self.error(f"redefinition of %{name}", pos)
        scope.values[name] = values
        if scope.forward:
            for i, v in enumerate(values):
                fwd = scope.forward.pop((name, i), None)
                if fwd is not None:
                    fwd.replace_all_uses_with(v)

    def operand(self, type_hint: Type | None = None) -> Value:
        self.ws()
        pos = self.pos
        m = _VALUE.match(self.text, pos)
        if not m:
            raise self.error("expected an SSA value (%name)")
        self.pos = m.end()
        return self.lookup(m.group(1), int(m.group(2) or 0), pos, type_hint)

    def operands(self) -> list[Value]:
        """Zero or more comma-separated SSA uses; stops (without consuming the comma) at anything else."""
        out: list[Value] = []
        if self.peek() != "%":
            return out
        out.append(self.operand())
        while True:
            save = self.pos
            if self.accept(",") and self.peek() == "%":
                out.append(self.operand())
            else:
                self.pos = save
                return out

    def value_name(self) -> tuple[str, int]:
        """A value being defined (`%name`), as (name, text position)."""
        self.ws()
        pos = self.pos
        m = _VALUE.match(self.text, pos)
        if not m or m.group(2) is not None:
            raise self.error("expected a value name (%name)")
        self.pos = m.end()
        return m.group(1), pos

    # -- types --------------------------------------------------------------------------------------------------------

    def at_type(self) -> bool:
        i = self._skip()
        return bool(_TYPE_START.match(self.text, i)) or self.text.startswith(tuple(_FLOAT_KINDS), i)

    def type(self) -> Type:
        self.ws()
        text, pos = self.text, self.pos
        c = text[pos : pos + 1]
        if c == "(":
            return self.function_type()
        if c == "!":
            return self._dialect_type()
        m = _INT_TYPE.match(text, pos)
        if m:
            self.pos = m.end()
            return IntType(int(m.group(2)), m.group(1))
        m = _BARE.match(text, pos)
        if not m:
            raise self.error("expected a type")
        word = m.group(0)
        kind = _FLOAT_KINDS.get(word)
        if kind is not None:
            self.pos = m.end()
            return FloatType(kind)
        if word == "index":
            self.pos = m.end()
            return IndexType()
        if word == "none":
            self.pos = m.end()
            return NoneType()
        if word == "tensor" and text.startswith("<", m.end()):
            self.pos = m.end() + 1
            return self._tensor_body()
        if text.startswith("<", m.end()):  # vector<...>, memref<...>, ...: not modelled, kept verbatim
            self.pos = m.end()
            return OpaqueType(word + self.balanced())
        raise self.error(f"unknown type {word!r}")

    def _tensor_body(self) -> TensorType:
        """After `tensor<`: `4x8xf32>`."""
        m = _DIMS.match(self.text, self.pos)
        dims_text = m.group(0)
        self.pos = m.end()
        if "?" in dims_text:
            raise self.error("dynamic tensor shapes are not supported")
        dims = tuple(int(d) for d in dims_text.split("x")[:-1])
        elem = self.type()
        if self.accept(","):
            raise self.error("tensor encodings (TTGIR layouts) are not supported by the TTIR reader")
        self.expect(">")
        return TensorType(dims, elem)

    def _dialect_type(self) -> Type:
        pos = self.pos
        m = self.match(_BANG)
        assert m is not None
        name = m.group(1)
        if name == "tt.ptr":
            return self.ptr_body()
        if name == "tt.tensordesc":
            return self.tensordesc_body()
        if name in self.type_aliases and not self.text.startswith("<", self.pos):
            return self.type_aliases[name]
        if self.text.startswith("<", self.pos):
            return OpaqueType("!" + name + self.balanced())
        if "." in name:
            return OpaqueType("!" + name)
        raise self.error(f"undefined type alias !{name}", pos)

    def ptr_body(self) -> PointerType:
        """`<f32>`, `<f32, 3>` or `<f32, "constant">` (a `tl.const` pointer) (after `!tt.ptr`, or alone where the format
        elides the dialect prefix)."""
        self.expect("<")
        pointee = self.type()
        space: int | str = 1
        if self.accept(","):
            space = self.string() if self.peek() == '"' else self.integer()
        self.expect(">")
        return PointerType(pointee, space)

    def tensordesc_body(self) -> TensorDescType:
        """`<32x32xf32>` (3.9) or `<tensor<32x32xf32>>` (3.7)."""
        self.expect("<")
        if self.accept_keyword("tensor"):
            self.expect("<")
            block = self._tensor_body()
        else:
            block = self._tensor_body()  # consumes the closing '>'
            return TensorDescType(block)
        if self.accept(","):
            raise self.error("tensor descriptor layouts are not supported by the TTIR reader")
        self.expect(">")
        return TensorDescType(block)

    def function_type(self) -> FunctionType:
        self.expect("(")
        ins = [] if self.at(")") else self.type_list()
        self.expect(")")
        self.expect("->")
        return FunctionType(tuple(ins), tuple(self.result_type_list()))

    def type_list(self) -> list[Type]:
        out = [self.type()]
        while True:
            save = self.pos
            if self.accept(",") and self.at_type():
                out.append(self.type())
            else:
                self.pos = save
                return out

    def result_type_list(self) -> list[Type]:
        """After `->`: one type, or a parenthesized (possibly empty) list."""
        if self.accept("("):
            out = [] if self.at(")") else self.type_list()
            self.expect(")")
            return out
        return [self.type()]

    # -- attributes ---------------------------------------------------------------------------------------------------

    def attr_dict(self, into: dict[str, Attribute]) -> None:
        """`{a = 1 : i32, flag, "quoted-name" = ...}` (optional)."""
        if not self.accept("{"):
            return
        if self.accept("}"):
            return
        while True:
            self.ws()
            m = _STRING.match(self.text, self.pos)
            if m:
                key = _unescape(m.group(1))
                self.pos = m.end()
            else:
                key = self.keyword()
            into[key] = self.attribute() if self.accept("=") else UnitAttr()
            if self.accept("}"):
                return
            self.expect(",")

    def attribute(self, type_hint: Type | None = None) -> Attribute:
        self.ws()
        text, pos = self.text, self.pos
        c = text[pos : pos + 1]
        if c == "{":
            d: dict[str, Attribute] = {}
            self.attr_dict(d)
            return DictAttr(tuple(d.items()))
        if c == "[":
            self.pos += 1
            items: list[Attribute] = []
            if not self.accept("]"):
                items.append(self.attribute())
                while self.accept(","):
                    items.append(self.attribute())
                self.expect("]")
            return ArrayAttr(tuple(items))
        if c == '"':
            s = self.string()
            if self.accept(":"):  # typed string attribute; the type is not kept
                self.type()
            return StringAttr(s)
        if c == "@":
            return SymbolRefAttr(self.symbol())
        if c == "#":
            m = _HASH.match(text, pos)
            if not m:
                raise self.error("expected an attribute")
            self.pos = m.end()
            name = m.group(1)
            if text.startswith("<", self.pos):
                return OpaqueAttr("#" + name + self._expand_aliases(self.balanced()))
            if name in self.attr_aliases:
                return self.attr_aliases[name]
            return OpaqueAttr("#" + name)
        if c in "-+0123456789" or text.startswith(("inf", "nan"), pos):
            return self._number_attr(type_hint)
        word = self.peek_keyword()
        if word in ("true", "false"):
            self.pos += len(word)
            return BoolAttr(word == "true")
        if word == "unit":
            self.pos += 4
            return UnitAttr()
        if word == "dense" and text.startswith("<", pos + 5):
            self.pos += 5
            return self._dense()
        if word == "array" and text.startswith("<", pos + 5):
            self.pos += 6
            elem = self.type()
            values: list[int] = []
            if self.accept(":"):
                values.append(self._array_elem())
                while self.accept(","):
                    values.append(self._array_elem())
            self.expect(">")
            return DenseArrayAttr(elem, tuple(values))
        if self.at_type():
            return TypeAttr(self.type())
        if word is not None and text.startswith("<", pos + len(word)):  # affine_map<...>, strided<...>, ...
            self.pos += len(word)
            return OpaqueAttr(word + self.balanced())
        raise self.error("expected an attribute")

    def _array_elem(self) -> int:
        if self.accept_keyword("true"):
            return 1
        if self.accept_keyword("false"):
            return 0
        return self.integer()

    def _number_attr(self, type_hint: Type | None) -> Attribute:
        pos = self.pos
        m = self.match(_NUMBER)
        if not m:
            raise self.error("expected a number")
        lit = m.group(0)
        t = type_hint
        if self.accept(":"):
            t = self.type()
        return self._literal(lit, t, pos)

    def _literal(self, lit: str, t: Type | None, pos: int) -> IntegerAttr | FloatAttr:
        is_hex = "0x" in lit
        is_float = not is_hex and any(ch in lit for ch in ".eEn")  # 'n' for inf/nan
        if t is None:
            t = FloatType(FloatKind.F64) if is_float else IntType(64)
        if isinstance(t, FloatType):
            if is_hex:
                try:
                    return FloatAttr(float_from_bits(int(lit, 16), t), t)
                except ValueError as e:
                    raise self.error(str(e), pos) from None
            return FloatAttr(round_float(float(lit), t), t)
        if is_float:
            raise self.error(f"float literal {lit} for non-float type {t}", pos)
        return IntegerAttr(signless(int(lit, 0), t), t)

    def _dense(self) -> DenseAttr:
        """After `dense`: `<splat | [nested] | "0xHEX">` then `: tensor<...>`."""
        pos = self.pos
        self.expect("<")
        raw: list[Any] = []
        blob: str | None = None
        if self.peek() == '"':
            blob = self.string()
        elif not self.at(">"):
            self._dense_elems(raw)
        self.expect(">")
        self.expect(":")
        t = self.type()
        if not isinstance(t, TensorType):
            raise self.error(f"dense attribute of non-tensor type {t}", pos)
        elem = t.elem
        if blob is not None:
            return DenseAttr(self._dense_blob(blob, t, pos), t)
        values: list[int | float] = []
        for lit in raw:
            if lit in ("true", "false"):
                values.append(1 if lit == "true" else 0)
                continue
            values.append(self._literal(lit, elem, pos).value)
        if len(values) not in (1, t.numel):
            raise self.error(f"dense attribute has {len(values)} values for {t}", pos)
        if len(values) > 1 and len({repr(v) for v in values}) == 1:  # MLIR keeps all-equal data as a splat
            values = values[:1]
        return DenseAttr(tuple(values), t)

    def _dense_elems(self, out: list[Any]) -> None:
        if self.accept("["):
            if self.accept("]"):
                return
            self._dense_elems(out)
            while self.accept(","):
                self._dense_elems(out)
            self.expect("]")
            return
        for word in ("true", "false"):
            if self.accept_keyword(word):
                out.append(word)
                return
        m = self.match(_NUMBER)
        if not m:
            raise self.error("expected a dense element")
        out.append(m.group(0))

    def _dense_blob(self, blob: str, t: TensorType, pos: int) -> tuple[int | float, ...]:
        if not blob.startswith("0x"):
            raise self.error('expected a hex blob in dense<"0x...">', pos)
        data = bytes.fromhex(blob[2:])
        elem = t.elem
        width = 8 if isinstance(elem, IntType) and elem.width == 1 else getattr(elem, "width", 0)
        size = max(width // 8, 1)
        if size == 0 or len(data) % size:
            raise self.error(f"hex blob of {len(data)} bytes does not fit {t}", pos)
        words = [int.from_bytes(data[i : i + size], "little") for i in range(0, len(data), size)]
        if isinstance(elem, FloatType):
            return tuple(float_from_bits(w, elem) for w in words)
        return tuple(signless(w, elem) for w in words)

    # -- locations ----------------------------------------------------------------------------------------------------

    def opt_loc(self) -> LocExpr | object:
        """An optional trailing `loc(...)`; returns _INHERIT when absent."""
        if self.accept("loc("):
            expr = self._loc_inner()
            self.expect(")")
            return expr
        return _INHERIT

    def _loc_inner(self) -> LocExpr:
        self.ws()
        text, pos = self.text, self.pos
        c = text[pos : pos + 1]
        if c == "#":
            m = self.match(_HASH)
            assert m is not None
            return ("ref", m.group(1), pos)
        if c == '"':
            s = self.string()
            if self.accept(":"):
                line = self.integer()
                self.expect(":")
                col = self.integer()
                if self.accept_keyword("to"):  # FileLineColRange: `to [line]:col` or `to line:col`
                    if not self.accept(":"):
                        self.integer()
                        self.expect(":")
                    self.integer()
                return Location(s, line, col)
            if self.accept("("):
                child = self._loc_inner()
                self.expect(")")
                return ("name", s, child)
            return ("name", s, None)
        word = self.keyword()
        if word == "unknown":
            return None
        if word == "callsite":
            self.expect("(")
            callee = self._loc_inner()
            self.expect_keyword("at")
            caller = self._loc_inner()
            self.expect(")")
            return ("call", callee, caller)
        if word == "fused":
            if self.at("<"):
                self.balanced()
            self.expect("[")
            items = [self._loc_inner()]
            while self.accept(","):
                items.append(self._loc_inner())
            self.expect("]")
            return ("fused", items)
        raise self.error(f"unknown location form {word!r}", pos)

    def resolve_loc(self, expr: LocExpr, depth: int = 0) -> Location | None:
        if expr is None or isinstance(expr, Location):
            return expr
        if depth > 100:
            raise TTIRParseError("location aliases form a cycle", 0, 0)
        kind = expr[0]
        if kind == "ref":
            name = expr[1]
            if name in self._resolved:
                return self._resolved[name]
            if name not in self.loc_aliases:
                raise self.error(f"undefined location alias #{name}", expr[2])
            loc = self.resolve_loc(self.loc_aliases[name][0], depth + 1)
            self._resolved[name] = loc
            return loc
        if kind == "name":
            child = self.resolve_loc(expr[2], depth + 1)
            if child is None:
                return None
            return Location(child.file, child.line, child.col, expr[1])
        if kind == "call":
            return self.resolve_loc(expr[2], depth + 1) or self.resolve_loc(expr[1], depth + 1)
        for item in expr[1]:  # fused
            loc = self.resolve_loc(item, depth + 1)
            if loc is not None:
                return loc
        return None

    # -- structure ----------------------------------------------------------------------------------------------------

    def parse_module(self) -> Module:
        module: Module | None = None
        loose: list[Op] = []
        self.scopes.append(_Scope())
        while True:
            self.ws()
            if self.pos >= len(self.text):
                break
            c = self.text[self.pos]
            if c == "#":
                self._alias_def()
            elif c == "!":
                self._type_alias_def()
            elif self.peek_keyword() == "module" and module is None and not loose:
                module = self._module()
            elif module is None:
                loose.append(self.op())
            else:
                raise self.error("unexpected text after the module")
        self._check_forward(self.scopes.pop())
        if module is None:
            module = Module(loose)
        elif loose:
            raise self.error("ops outside the module")
        self._finish_locations()
        return module

    def _alias_def(self) -> None:
        m = self.match(_HASH)
        assert m is not None
        name = m.group(1)
        self.expect("=")
        pos = self._skip()
        if self.accept("loc("):
            expr = self._loc_inner()
            self.expect(")")
            self.loc_aliases[name] = (expr, pos)
        else:
            self.attr_aliases[name] = self.attribute()

    def _type_alias_def(self) -> None:
        m = self.match(_BANG)
        assert m is not None
        self.expect("=")
        self.type_aliases[m.group(1)] = self.type()

    def _module(self) -> Module:
        self.expect_keyword("module")
        attrs: dict[str, Attribute] = {}
        if self.peek() == "@":
            attrs["sym_name"] = StringAttr(self.symbol())
        if self.accept_keyword("attributes"):
            self.attr_dict(attrs)
        self.expect("{")
        module = Module(attrs=attrs)
        self.scopes.append(_Scope())
        while not self.accept("}"):
            if self.pos >= len(self.text):
                raise self.error("unterminated module")
            module.body.append(self.op())
        self._check_forward(self.scopes.pop())
        loc = self.opt_loc()
        if loc is not _INHERIT:
            self.pending_locs.append((module, loc))
        return module

    def _check_forward(self, scope: _Scope) -> None:
        for (name, _), fwd in scope.forward.items():
            raise self.error(f"use of undefined value %{name}", fwd.pos)
        self._check_blocks(scope)

    def _finish_locations(self) -> None:
        for target, expr in self.pending_locs:
            target.loc = self.resolve_loc(expr)
        for targets, op in self.inherit_locs:
            for t in targets:
                t.loc = op.loc

    def region(
        self, entry_args: list[tuple[str, Type, LocExpr, int]] | None = None, inherit: list[Any] | None = None
    ) -> Region:
        """`{ [^bb0(args):] ops [^bbN(args): ops]* }`. `entry_args` are declared by the op's own syntax (function
        parameters, loop variables): (name, type, location or _INHERIT, text position)."""
        self.expect("{")
        region = Region()
        scope = _Scope()
        self.scopes.append(scope)
        block: Block | None = None
        if entry_args is not None:
            block = Block([t for _, t, _, _ in entry_args])
            region.add_block(block)
            for arg, (name, _, loc, pos) in zip(block.args, entry_args):
                self._name_arg(arg, name, pos, loc, inherit)
        while True:
            self.ws()
            c = self.text[self.pos : self.pos + 1]
            if c == "}":
                self.pos += 1
                break
            if not c:
                raise self.error("unterminated region")
            if c == "^":
                block = self._block_header(region)
                continue
            if block is None:
                block = region.add_block(Block())
            block.append(self.op())
        self.scopes.pop()
        parent = self.scopes[-1]
        for key, fwd in scope.forward.items():  # may still be defined later in the enclosing region
            existing = parent.forward.get(key)
            if existing is None:
                parent.forward[key] = fwd
            else:
                fwd.replace_all_uses_with(existing)
        self._check_blocks(scope)
        return region

    def _check_blocks(self, scope: _Scope) -> None:
        for label, (_, first_use) in scope.blocks.items():
            if first_use is not None:
                raise self.error(f"reference to undefined block ^{label}", first_use)

    def _name_arg(
        self, arg: BlockArgument, name: str | None, pos: int, loc: LocExpr, inherit: list[Any] | None
    ) -> None:
        if name is not None:
            arg.name = None if name.isdigit() else name
            self.define(name, [arg], pos)
        if loc is _INHERIT:
            if inherit is not None:
                inherit.append(arg)
        else:
            self.pending_locs.append((arg, loc))

    def _block_header(self, region: Region) -> Block:
        """`^label(%a: T loc(..), ...):`; arguments printed without a location get none."""
        pos = self.pos
        m = self.match(_BLOCK)
        assert m is not None
        label = m.group(1)
        scope = self.scopes[-1]
        known = scope.blocks.get(label)
        if known is not None and known[1] is None:
            raise self.error(f"redefinition of block ^{label}", pos)
        block = known[0] if known is not None else Block(label=label)
        block.label = label
        scope.blocks[label] = (block, None)
        if self.accept("(") and not self.accept(")"):
            while True:
                name, apos = self.value_name()
                self.expect(":")
                t = self.type()
                loc = self.opt_loc()
                arg = BlockArgument(t, block, len(block.args))
                block.args.append(arg)
                self._name_arg(arg, name, apos, loc, None)
                if self.accept(")"):
                    break
                self.expect(",")
        self.expect(":")
        region.add_block(block)
        return block

    def successor(self) -> Block:
        pos = self._skip()
        m = self.match(_BLOCK)
        if not m:
            raise self.error("expected a block (^label)")
        label = m.group(1)
        scope = self.scopes[-1]
        known = scope.blocks.get(label)
        if known is None:
            block = Block(label=label)
            scope.blocks[label] = (block, pos)
            return block
        return known[0]

    # -- ops ----------------------------------------------------------------------------------------------------------

    def op(self) -> Op:
        self.ws()
        start = self.pos
        groups: list[tuple[str, int, int]] = []
        if self.text.startswith("%", start):
            while True:
                name, pos = self.value_name()
                count = 1
                if self.accept(":"):
                    count = self.integer()
                groups.append((name, count, pos))
                if not self.accept(","):
                    break
            self.expect("=")
        n_results = sum(c for _, c, _ in groups)
        outer_op = self.current_op
        self.ws()
        if self.text.startswith('"', self.pos):
            name = self.string()
            self.current_op = name
            st = OpState(name, n_results)
            self._generic(st)
        else:
            m = self.match(_BARE)
            if not m:
                raise self.error("expected an op")
            name = m.group(0)
            self.current_op = name
            st = OpState(name, n_results)
            cls = OP_CLASSES.get(name)
            if cls is None:
                DEFAULT.parse(self, st)
            else:
                cls.parse_custom(self, st)
            if not self.at_op_end():
                raise self.error(f"cannot read the custom syntax of {name} (unexpected text)", self._skip())
        if len(st.result_types) != n_results:
            raise self.error(
                f"{name} defines {n_results} result name(s) but has {len(st.result_types)} result(s)", start
            )
        loc = self.opt_loc()
        op = self._build(st, groups)
        if loc is not _INHERIT:
            self.pending_locs.append((op, loc))
        if st.inherit:
            self.inherit_locs.append((st.inherit, op))
        self.current_op = outer_op
        return op

    def _build(self, st: OpState, groups: list[tuple[str, int, int]]) -> Op:
        names: list[str | None] = []
        for name, count, _ in groups:
            names.extend([None if name.isdigit() else name] * count)
        cls = OP_CLASSES.get(st.name)
        if cls is not None:
            attrs = st.attrs
            for key, d in cls.normalized_attrs:
                a = attrs.get(key)
                if a is not None:
                    attrs[key] = d.normalize(a)
            seg = attrs.pop("operandSegmentSizes", None) if cls.operand_defs else None
            op = cls(st.operands, st.result_types, attrs, st.regions, None, names, st.successors)
            if not cls.fixed_operands:
                op.segment_sizes = st.segments or (tuple(seg.values) if isinstance(seg, DenseArrayAttr) else None)
        else:
            op = UnknownOp(st.name, st.operands, st.result_types, st.attrs, st.regions, None, names, st.successors)
        i = 0
        for name, count, pos in groups:
            self.define(name, op.results[i : i + count], pos)
            i += count
        return op

    def format_of(self, cls: type[Op]) -> Any:
        return format_of(cls)

    def hint_type(self, v: Value, t: Type) -> None:
        """Give a forward reference the type the text spells for it."""
        if isinstance(v, _Forward) and isinstance(v.type, NoneType):
            v.type = t

    def _generic(self, st: OpState) -> None:
        """`"name"(operands) [successors] <{properties}> ({regions}) {attrs} : (types) -> (types)`."""
        self.expect("(")
        if not self.accept(")"):
            st.operands = self.operands()
            self.expect(")")
        if self.accept("["):
            st.successors.append(self.successor())
            while self.accept(","):
                st.successors.append(self.successor())
            self.expect("]")
        if self.at("<{"):
            self.expect("<")
            self.attr_dict(st.attrs)
            self.expect(">")
        if self.at("({"):
            self.expect("(")
            st.regions.append(self.region(inherit=st.inherit))
            while self.accept(","):
                st.regions.append(self.region(inherit=st.inherit))
            self.expect(")")
        self.attr_dict(st.attrs)
        self.expect(":")
        ft = self.function_type()
        if len(ft.inputs) != len(st.operands):
            raise self.error(f"{len(st.operands)} operands but {len(ft.inputs)} operand types")
        for v, t in zip(st.operands, ft.inputs):
            self.hint_type(v, t)
        st.result_types = list(ft.results)


# ---------------------------------------------------------------------------------------------------------------------
# Public entry points


def parse_ttir(text: str) -> Module:
    """Read TTIR text (as printed by Triton 3.7 or 3.9, locations included) into a `Module`."""
    return Parser(text).parse_module()


def parse_type(text: str) -> Type:
    """Read one type, e.g. `tensor<4x!tt.ptr<f32>>`."""
    p = Parser(text)
    t = p.type()
    p.ws()
    if p.pos != len(text):
        raise p.error("trailing text after type")
    return t


def parse_attribute(text: str) -> Attribute:
    """Read one attribute, e.g. `dense<0xFF800000> : tensor<4xf32>`."""
    p = Parser(text)
    a = p.attribute()
    p.ws()
    if p.pos != len(text):
        raise p.error("trailing text after attribute")
    return a
