"""`tt.map_elementwise` with `pack = p > 1` becomes one with `pack = 1` over p de-interleaved copies of each tensor.

`tl.map_elementwise(fn, a, b, pack=2)` calls `fn(a0, a1, b0, b1)` on two consecutive elements of each source and
takes `(c0, c1, d0, d1)` back: on a GPU the elements one thread holds in registers. Row-major consecutive elements
are what a CPU-side caller can name, so source `a` (N elements) is flattened and split into `a[k::p]`, k = 0..p-1
(a reshape to [N/p, 2, .., 2] and log2 p rounds of `tt.split`); the region, unchanged, maps element i of those
p·n tensors — its arguments are already ordered source-major, offset-minor, as `pack = 1` over them expects — and
each result's p outputs are joined back (`tt.join`, the highest offset bit first) and reshaped to the source shape.
Every backend then renders only `pack = 1`. A `p` that is no power of two, or that does not divide the element
count, is refused by name.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.core import Module, Value
from ..ir.types import TensorType
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace


def _deinterleave(bld: Builder, src: Value, p: int) -> list[Value]:
    """`[src.flat[k::p] for k in range(p)]`, each of shape [N/p]."""
    n = src.type.numel
    bits = p.bit_length() - 1
    parts: list[tuple[Value, int]] = [(bld.reshape(src, (n // p, *([2] * bits))), 0)]
    for level in range(bits):  # the last dim is offset bit `level`
        split: list[tuple[Value, int]] = []
        for v, offset in parts:
            half = TensorType(v.type.shape[:-1], v.type.element)
            op = bld.op(O.Split, [v], [half, half])
            split += [(op.results[0], offset), (op.results[1], offset | 1 << level)]
        parts = split
    return [v for v, _ in sorted(parts, key=lambda vo: vo[1])]


def _interleave(bld: Builder, outs: list[Value], shape: tuple[int, ...]) -> Value:
    """The inverse of `_deinterleave`: `outs[k]` at flat positions k, k+p, ... of a tensor of `shape`."""
    parts = list(outs)
    while len(parts) > 1:  # join the pair differing in the highest remaining offset bit: it becomes an inner dim
        half = len(parts) // 2
        parts = [bld.join(parts[k], parts[k + half]) for k in range(half)]
    return bld.reshape(parts[0], shape)


def unpack(op: O.MapElementwise) -> None:
    p = op.pack
    shape = tuple(op.srcs[0].type.shape) if op.srcs and op.srcs[0].type.is_tensor else ()
    n = op.srcs[0].type.numel if shape else 1
    if p & (p - 1) or not shape or n % p:
        raise UnsupportedError(
            "sdk",
            f"tt.map_elementwise with pack = {p} over {n} element(s): pack must be a power of two dividing it",
            op.loc,
        )
    bld = Builder(op)
    srcs = [part for s in op.srcs for part in _deinterleave(bld, s, p)]
    types = [TensorType((n // p,), r.type.element) for r in op.results for _ in range(p)]
    attrs = {k: v for k, v in op.attrs.items() if k != "pack"}
    regions, op.regions = op.regions, []
    new = O.MapElementwise(srcs, types, attrs=attrs, regions=regions, loc=op.loc)
    bld.block.insert(bld.block.ops.index(op), new)
    outs = new.results
    replace(op, [_interleave(bld, list(outs[i * p : (i + 1) * p]), shape) for i in range(len(op.results))])


@ir_pass("unpack-map-elementwise")
class UnpackMapElementwise:
    """Rewrites every `pack > 1` map_elementwise to `pack = 1` (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.MapElementwise) and op.pack != 1:
                unpack(op)


__all__ = ["UnpackMapElementwise", "unpack"]
