"""Declarative custom syntax: one format string per op class, which both reads and prints the op.

An op class sets `assembly_format` (a small form of MLIR's declarative assembly format):

    $field             an operand field (one value, an optional one, a comma list), a successor, or an attribute
                       field in its own spelling (an enum as its keyword, a string quoted, a flag as nothing)
    $operands          all operands, comma-separated (`$results`: all results, only inside `type(...)`)
    type($field)       the type(s) of an operand or result field
    functional-type    `(operand types) -> result types`
    attr-dict          the attributes no other element prints (`{a = 1 : i32}`), absent when there are none
    custom<name>($f)   the class's `parse_<name>(p, st)` / `print_<name>(w)` pair; `$f` fields it prints itself
    `(`  , : -> [ ] *  literals (a bare word is a keyword literal)
    ( ... )?           an optional group, printed when its first field is present, read when its first element is
                       next; consecutive optional groups and attr-dicts are read in any order (Triton's `oilist`)

Whitespace before an element prints one space (never before `,`, `)` or `]`); the first element gets one unless
the format starts with a literal.
Result types the text does not spell come from the class's `infer_result_types`. A format that does not fit an op
(wrong operand count, a required attribute missing) prints nothing, and the printer falls back to the generic form.
"""

from __future__ import annotations

import re
from typing import Any

from .core import Op
from .fields import OPTIONAL, SINGLE, VARIADIC, FlagProp, KeywordProp, OperandDef, PropDef, StrProp, SymbolProp
from .types import FunctionType, NoneType, Type

__all__ = ["DEFAULT", "Format", "format_of"]


class FormatError(ValueError):
    """An op class's `assembly_format` does not fit its fields."""


# ---------------------------------------------------------------------------------------------------------------------
# Elements. `parse(p, st)` reads at the parser's position into the op state; `print(w, op)` returns text, "" (nothing
# to print) or None (the op does not fit this format); `starts(p)` says whether the element is next in the text.


class _Elem:
    space = False
    #: read only when `starts` (optional groups)
    optional = False
    #: the field whose presence decides whether an optional group holding this element prints
    anchor: str | None = None

    def parse(self, p: Any, st: Any) -> None:
        raise NotImplementedError

    def print(self, w: Any, op: Op) -> str | None:
        raise NotImplementedError

    def starts(self, p: Any) -> bool:
        return True

    def present(self, op: Op) -> bool:
        return True


class _Lit(_Elem):
    def __init__(self, text: str) -> None:
        self.text = text
        self.word = text[0].isalpha() or text[0] == "_"

    def parse(self, p: Any, st: Any) -> None:
        if self.word:
            p.expect_keyword(self.text)
        else:
            p.expect(self.text)

    def print(self, w: Any, op: Op) -> str | None:
        return self.text

    def starts(self, p: Any) -> bool:
        return p.peek_keyword() == self.text if self.word else p.at(self.text)


class _Operand(_Elem):
    def __init__(self, d: OperandDef) -> None:
        self.d = d
        self.anchor = d.name

    def parse(self, p: Any, st: Any) -> None:
        kind = self.d.kind
        if kind == SINGLE:
            vals = [p.operand()]
        elif kind == OPTIONAL:
            vals = [p.operand()] if p.peek() == "%" else []
        else:
            vals = p.operands()
        st.groups[self.d.name] = vals

    def print(self, w: Any, op: Op) -> str | None:
        return w.vs(op.operand_group(self.d.name))

    def starts(self, p: Any) -> bool:
        return p.peek() == "%"

    def present(self, op: Op) -> bool:
        return bool(op.operand_group(self.d.name))


class _AllOperands(_Elem):
    anchor = "$operands"

    def parse(self, p: Any, st: Any) -> None:
        st.operands = p.operands()

    def print(self, w: Any, op: Op) -> str | None:
        return w.vs(op.operands)

    def starts(self, p: Any) -> bool:
        return p.peek() == "%"

    def present(self, op: Op) -> bool:
        return bool(op.operands)


class _Successor(_Elem):
    def __init__(self, name: str) -> None:
        self.name = name

    def parse(self, p: Any, st: Any) -> None:
        st.succ[self.name] = p.successor()

    def print(self, w: Any, op: Op) -> str | None:
        return w.block_ref(op.successors[op.successor_index[self.name]])

    def starts(self, p: Any) -> bool:
        return p.peek() == "^"


class _Attr(_Elem):
    def __init__(self, d: PropDef) -> None:
        self.d = d
        self.anchor = d.name

    def parse(self, p: Any, st: Any) -> None:
        st.attrs[self.d.key] = self.d.parse(p)

    def print(self, w: Any, op: Op) -> str | None:
        a = op.attrs.get(self.d.key)
        return None if a is None else self.d.print(w, a)

    def starts(self, p: Any) -> bool:
        d = self.d
        if isinstance(d, KeywordProp) or not isinstance(d, (StrProp, SymbolProp)):
            return p.peek_keyword() is not None or isinstance(d, FlagProp)
        return p.peek() == ('"' if isinstance(d, StrProp) else "@")

    def present(self, op: Op) -> bool:
        a = op.attrs.get(self.d.key)
        return a is not None and (not isinstance(self.d, FlagProp) or self.d.to_python(a))


class _TypeOf(_Elem):
    """`type($f)`: for an operand field its values' types (read only to type forward references), for a result
    field the result types."""

    def __init__(self, name: str, operand: OperandDef | None, result_kind: str | None) -> None:
        self.name = name
        self.operand = operand
        self.result_kind = result_kind
        self.anchor = name

    def parse(self, p: Any, st: Any) -> None:
        if self.result_kind == SINGLE:
            st.types[self.name] = [p.type()]
        elif self.result_kind is not None:
            st.types[self.name] = p.result_type_list()
        elif self.operand is None or self.operand.kind == VARIADIC:
            group = st.operands if self.operand is None else st.groups.get(self.name)
            st.types[self.name] = p.type_list() if group is None or group else []
        else:
            st.types[self.name] = [p.type()]

    def print(self, w: Any, op: Op) -> str | None:
        if self.result_kind == SINGLE:
            return str(op.results[op.result_index[self.name]].type)
        if self.result_kind is not None:
            rs = op.results if self.name == "$results" else op.results[op.result_index[self.name] :]
            ts = [r.type for r in rs]
            return str(ts[0]) if len(ts) == 1 and not isinstance(ts[0], FunctionType) else f"({w.types(ts)})"
        vals = op.operands if self.operand is None else op.operand_group(self.name)
        return w.types([v.type for v in vals])

    def present(self, op: Op) -> bool:
        if self.operand is not None:
            return bool(op.operand_group(self.name))
        return bool(op.operands) if self.result_kind is None else True


class _FunctionalType(_Elem):
    def parse(self, p: Any, st: Any) -> None:
        ft = p.function_type()
        st.types["$operands"] = list(ft.inputs)
        st.types["$results"] = list(ft.results)

    def print(self, w: Any, op: Op) -> str | None:
        return str(FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results)))


class _AttrDict(_Elem):
    def __init__(self) -> None:
        self.elide: tuple[str, ...] = ()

    def parse(self, p: Any, st: Any) -> None:
        p.attr_dict(st.attrs)

    def print(self, w: Any, op: Op) -> str | None:
        return w.attr_dict(op.attrs, self.elide, prefix="")

    def starts(self, p: Any) -> bool:
        return p.at("{")


class _Custom(_Elem):
    def __init__(self, cls: type[Op], name: str) -> None:
        self.parse_fn = getattr(cls, "parse_" + name)
        self.print_name = "print_" + name

    def parse(self, p: Any, st: Any) -> None:
        self.parse_fn(p, st)

    def print(self, w: Any, op: Op) -> str | None:
        return getattr(op, self.print_name)(w)


class _Group(_Elem):
    optional = True

    def __init__(self, elems: list[_Elem]) -> None:
        self.elems = elems
        self.anchor = next((e.anchor for e in elems if e.anchor is not None), None)
        self.key = next((e for e in elems if e.anchor == self.anchor), None)

    def parse(self, p: Any, st: Any) -> None:
        for e in self.elems:
            e.parse(p, st)

    def starts(self, p: Any) -> bool:
        first = self.elems[0]
        if not first.starts(p):
            return False
        if not isinstance(first, _Lit) or first.word or len(self.elems) < 2:
            return True
        save = p.pos
        p.expect(first.text)
        ok = self.elems[1].starts(p)
        p.pos = save
        return ok

    def print(self, w: Any, op: Op) -> str | None:
        if self.key is None or not self.key.present(op):
            return ""
        return _render(self.elems, w, op)

    def present(self, op: Op) -> bool:
        return self.key is not None and self.key.present(op)


class _Run(_Elem):
    """Consecutive optional groups and attr-dicts, read in any order (each group at most once)."""

    def __init__(self, members: list[_Elem]) -> None:
        self.members = members

    def parse(self, p: Any, st: Any) -> None:
        todo = list(self.members)
        while True:
            for e in todo:
                if e.starts(p):
                    e.parse(p, st)
                    if isinstance(e, _Group):
                        todo.remove(e)
                    break
            else:
                return


def _render(elems: list[_Elem], w: Any, op: Op) -> str | None:
    out = []
    for e in elems:
        s = e.print(w, op)
        if s is None:
            return None
        if s:
            out.append(" " + s if e.space else s)
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------------
# The format of one op class.

_TOKEN = re.compile(
    r"(?P<ws>\s*)(?:(?P<lit>`[^`]+`)|(?P<var>\$\w+)\^?|type\(\s*(?P<type>\$\w+)\s*\)"
    r"|custom<(?P<custom>\w+)>(?:\((?P<args>[^)]*)\))?|(?P<dir>attr-dict|functional-type)|(?P<open>\()|(?P<close>\)\?)"
    r"|(?P<punct>->|[,:\[\]*=|<>])|(?P<word>[A-Za-z_]\w*))"
)


class Format:
    """A compiled `assembly_format` of one op class."""

    def __init__(self, cls: type[Op], text: str) -> None:
        self.cls = cls
        self.text = text
        self.mentioned: set[str] = set()
        self.named_operands = False
        self.elems = self._compile(text)
        for e in self._walk(self.elems):
            if isinstance(e, _AttrDict):
                e.elide = tuple(sorted(self.mentioned))
        # runs of optional groups and attr-dicts are read in any order; everything else in sequence
        self.steps: list[_Elem] = []
        for e in self.elems:
            last = self.steps[-1] if self.steps else None
            if isinstance(e, (_Group, _AttrDict)) and isinstance(last, (_Group, _AttrDict, _Run)):
                if not isinstance(last, _Run):
                    last = self.steps[-1] = _Run([last])
                last.members.append(e)
            else:
                self.steps.append(e)
        self.operand_names = [d.name for d in cls.operand_defs]
        self.result_names = [d.name for d in cls.result_defs]
        self.spelled = [e.name for e in self._walk(self.elems) if isinstance(e, _TypeOf) and e.result_kind is None] + (
            ["$operands"] if any(isinstance(e, _FunctionalType) for e in self.elems) else []
        )

    def _walk(self, elems: list[_Elem]) -> list[_Elem]:
        out: list[_Elem] = []
        for e in elems:
            out.append(e)
            if isinstance(e, _Group):
                out += self._walk(e.elems)
        return out

    def _compile(self, text: str) -> list[_Elem]:
        cls = self.cls
        stack: list[list[_Elem]] = [[]]
        pos = 0
        first = not text.startswith("`")
        while pos < len(text.rstrip()):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise FormatError(f"{cls.__name__}: cannot read assembly format at {text[pos:]!r}")
            pos = m.end()
            space = bool(m.group("ws")) or first
            first = False
            if m.group("open"):
                stack.append([])
                first = space  # the group's first element takes the space before `(`
                continue
            if m.group("close"):
                group = _Group(stack.pop())
                stack[-1].append(group)
                continue
            e = self._element(m)
            e.space = space and not (isinstance(e, _Lit) and e.text in (",", ")", "]"))
            stack[-1].append(e)
        if len(stack) != 1:
            raise FormatError(f"{cls.__name__}: unbalanced optional group in {text!r}")
        return stack[0]

    def _element(self, m: re.Match[str]) -> _Elem:
        cls = self.cls
        if m.group("lit"):
            return _Lit(m.group("lit")[1:-1])
        if m.group("punct") or m.group("word"):
            return _Lit(m.group("punct") or m.group("word"))
        if m.group("dir") == "attr-dict":
            return _AttrDict()
        if m.group("dir") == "functional-type":
            return _FunctionalType()
        if m.group("custom"):
            for a in (m.group("args") or "").split(","):
                if a.strip():
                    self.mentioned.add(self._prop(a.strip()[1:]).key)
            return _Custom(cls, m.group("custom"))
        if m.group("type"):
            name = m.group("type")[1:]
            if name in ("operands", "results") and name not in cls.operand_index:
                return _TypeOf("$" + name, None, VARIADIC if name == "results" else None)
            if name in cls.operand_index:
                return _TypeOf(name, cls.operand_defs[cls.operand_index[name]], None)
            if name in cls.result_index:
                return _TypeOf(name, None, cls.result_defs[cls.result_index[name]].kind)
            raise FormatError(f"{cls.__name__}: type(${name}) names no operand or result field")
        name = m.group("var")[1:]
        if name in cls.operand_index:
            self.named_operands = True
            return _Operand(cls.operand_defs[cls.operand_index[name]])
        if name == "operands":
            return _AllOperands()
        if name in cls.successor_index:
            return _Successor(name)
        d = self._prop(name)
        self.mentioned.add(d.key)
        return _Attr(d)

    def _prop(self, name: str) -> PropDef:
        d = getattr(self.cls, name, None)
        if not isinstance(d, PropDef):
            raise FormatError(f"{self.cls.__name__}: ${name} names no field")
        return d

    # -- reading ------------------------------------------------------------------------------------------------------

    def parse(self, p: Any, st: Any) -> None:
        for e in self.steps:
            if e.optional and not e.starts(p):
                continue
            e.parse(p, st)
        cls = self.cls
        groups, types = st.groups, st.types
        if self.named_operands:
            vals = [groups.get(n, []) for n in self.operand_names]
            st.operands = [v for g in vals for v in g]
            if not cls.fixed_operands:
                st.segments = tuple(len(g) for g in vals)
        if st.succ:
            st.successors = [st.succ[d.name] for d in cls.successor_defs if d.name in st.succ]
        # operand types spelled in the text give forward references (uses before definitions) their types
        for name in self.spelled:
            for v, t in zip(st.operands if name == "$operands" else groups.get(name, ()), types.get(name, ())):
                if isinstance(v.type, NoneType):
                    p.hint_type(v, t)
        results: list[Type] = list(types.get("$results", ()))
        for name in self.result_names:
            results += types.get(name, ())
        if not results and st.n_results:
            by_field = {n: [v.type for v in groups.get(n, ())] for n in self.operand_names}
            if not self.named_operands:
                by_field["$operands"] = [v.type for v in st.operands]
            results = cls.infer_result_types(by_field, st.attrs) or []
        if len(results) == 1 and st.n_results > 1:
            results = results * st.n_results
        st.result_types = results

    # -- printing -----------------------------------------------------------------------------------------------------

    def print(self, w: Any, op: Op) -> str | None:
        cls = self.cls
        if self.named_operands and not _fits(op):
            return None
        if len(op.successors) != len(cls.successor_defs):
            return None
        return _render(self.elems, w, op)


def _fits(op: Op) -> bool:
    """Do the operands (and results) of `op` fill its declared fields?"""
    defs = op.operand_defs
    if op.fixed_operands:
        if len(op.operands) != len(defs):
            return False
    else:
        sizes = op.operand_segments()
        if sum(sizes) != len(op.operands) or min(sizes, default=0) < 0:
            return False
        for d, n in zip(defs, sizes):
            if d.kind == SINGLE and n != 1 or d.kind == OPTIONAL and n > 1:
                return False
    rdefs = op.result_defs
    return not (rdefs and not any(d.kind == VARIADIC for d in rdefs) and len(op.results) != len(rdefs))


class _Default:
    """Ops without a format (unknown ops, plugin ops printed in custom form by another tool): read
    `[attr-dict] operands [fastmath] [attr-dict] [: types [-> types] | : (types) -> types]`; printed generically.
    Result types: after `->` if present; else one type for all results; else the first N types."""

    def parse(self, p: Any, st: Any) -> None:
        p.attr_dict(st.attrs)
        st.operands = p.operands()
        if p.at("fastmath<"):
            p.expect("fastmath")
            st.attrs["fastmath"] = _FASTMATH.parse(p)
        p.attr_dict(st.attrs)
        types: list[Type] = []
        arrow: list[Type] | None = None
        if p.accept(":"):
            if p.at("("):
                ft = p.function_type()
                types, arrow = list(ft.inputs), list(ft.results)
            else:
                types = p.type_list()
                if p.accept("->"):
                    arrow = p.result_type_list()
        if not p.at_op_end():
            raise p.error(f"cannot read the custom syntax of {st.name} (unexpected text)")
        n = st.n_results
        if arrow is not None:
            st.result_types = arrow * n if len(arrow) == 1 and n > 1 else arrow
        elif n == 0:
            st.result_types = []
        elif len(types) == 1:
            st.result_types = types * n
        elif len(types) >= n:
            st.result_types = types[:n]
        else:
            raise p.error(f"cannot infer {n} result type(s) from {', '.join(map(str, types))}")

    def print(self, w: Any, op: Op) -> str | None:
        return None


def _fastmath() -> PropDef:
    from .fields import FastMathProp

    d = FastMathProp()
    d.__set_name__(Op, "fastmath")
    return d


_FASTMATH = _fastmath()
DEFAULT = _Default()
_CACHE: dict[type, Format | _Default] = {}


def format_of(cls: type[Op]) -> Format | _Default:
    """The compiled format of `cls` (its own `assembly_format`, or the default custom form)."""
    f = _CACHE.get(cls)
    if f is None:
        text = cls.assembly_format
        f = Format(cls, text) if text is not None else DEFAULT
        _CACHE[cls] = f
    return f
