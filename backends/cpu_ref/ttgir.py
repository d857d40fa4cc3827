"""TTGIR input (`triton.compile("kernel.ttgir")`): a cpu_ref program runs its whole tile in one thread, so a TTGIR
module's layouts carry nothing it needs. `to_ttir` turns such a module's text into TTIR text:

- the layout attribute aliases (`#blocked = #ttg.blocked<...>`, `#smem = #ttg.shared_memory`) are dropped;
- a tensor type keeps its shape and element type and loses its encoding (`tensor<4x8xf32, #blocked>`);
- the layout-only ops forward their operand to their users: `ttg.convert_layout`, and a `ttg.local_load` of a
  `ttg.local_alloc` that was given a tensor (a round trip through shared memory).

Every other TTGIR op (a shared-memory buffer written with `ttg.local_store`, async copies, MMA ops, ...) stays as it is,
so the TTIR reader stops at it and names it: a refusal, never a silently different kernel.
"""

from __future__ import annotations

import re

_LAYOUT_ALIAS = re.compile(r"^#[\w.$-]+ = #(?:ttg|triton_gpu)\.[^\n]*\n", re.MULTILINE)
_TYPE_OPEN = re.compile(r"tensor<|!ttg\.memdesc<")
_FORWARD = re.compile(
    r"^[ \t]*(%[\w.$-]+) = ttg\.(convert_layout|local_alloc|local_load) (%[\w.$-]+)\b[^\n]*\n", re.MULTILINE
)
_VALUE = re.compile(r"%[\w.$-]+")


def is_ttgir(text: str) -> bool:
    """A module with TritonGPU module attributes or layout aliases (what Triton's TTGIR stage and .ttgir files hold)."""
    head = text[: text.find("tt.func")] if "tt.func" in text else text
    return "ttg.num-warps" in head or _LAYOUT_ALIAS.search(head) is not None


def _strip_encodings(text: str) -> str:
    out: list[str] = []
    pos = 0
    for m in _TYPE_OPEN.finditer(text):
        if m.start() < pos:  # inside a type already rewritten (a tensor type in an encoding)
            continue
        depth, i, cut = 1, m.end(), -1
        while depth:
            c = text[i]
            if c == "<":
                depth += 1
            elif c == ">" and text[i - 1] != "-":
                depth -= 1
            elif c == "," and depth == 1 and cut < 0:
                cut = i
            i += 1
        body = text[m.end() : cut if cut >= 0 else i - 1]
        out.append(text[pos : m.start()])
        out.append(f"tensor<{body}>")
        pos = i
    out.append(text[pos:])
    return "".join(out)


def to_ttir(text: str) -> str:
    """TTIR text for the TTGIR module `text` (see the module docstring)."""
    text = _strip_encodings(_LAYOUT_ALIAS.sub("", text))
    forward: dict[str, str] = {}
    allocs: set[str] = set()

    def drop(m: re.Match) -> str:
        result, op, operand = m.group(1), m.group(2), m.group(3)
        if op == "local_load" and operand not in allocs:
            return m.group(0)  # a buffer that was not given a tensor: not a pure round trip
        if op == "local_alloc":
            allocs.add(result)
        forward[result] = forward.get(operand, operand)
        return ""

    text = _FORWARD.sub(drop, text)
    if forward:
        text = _VALUE.sub(lambda m: forward.get(m.group(0), m.group(0)), text)
    return text
