"""Calls of native plugin symbols checked against the signatures the libraries declare (plugin.h rule 4).

A kernel declares an external function's types itself (`extern_elementwise(..., {(tl.float32,): ("sym",
tl.float32)})`); where the library says `sym` is `int32_t(int32_t)`, calling it as a float function ran with
garbage in the registers. Checked on the kernel as Triton hands it over, at the start of the `sdkir` stage.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.core import Module
from ..ir.dialects.tt import ExternElementwise


def check_native_calls(module: Module, backend: str, signatures: dict[str, tuple[str, str, tuple[str, ...]]]) -> None:
    """Refuse a call whose argument or result element types differ from its symbol's declared signature."""
    if not signatures:
        return
    for op in module.walk():
        if not isinstance(op, ExternElementwise) or op.symbol not in signatures:
            continue
        owner, ret, args = signatures[op.symbol]
        got_args = tuple(str(v.type.element) for v in op.operands)
        got_ret = str(op.result.type.element)
        if (got_ret, got_args) != (ret, args):
            raise UnsupportedError(
                backend,
                f"kernel calls native symbol {op.symbol!r} as {got_ret}({', '.join(got_args)}), but plugin {owner} "
                f"declares it {ret}({', '.join(args)}); fix the extern_elementwise declaration's types",
                op.loc,
            )


__all__ = ["check_native_calls"]
