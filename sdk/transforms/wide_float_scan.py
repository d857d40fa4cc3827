"""A bf16/f16 `tt.scan` whose combine is one `arith.addf`/`arith.mulf` is carried in f32 and rounded once per output.

Triton's frontend emits `tl.cumsum`/`tl.cumprod` of bf16/f16 with the combine in the narrow type (no promotion to
f32), and every combine rounds to it; upstream `test_scan2d` compares against numpy's f32 scan with rtol=0.01,
atol=1e-3. Re-associating does not get there: opencl's Hillis-Steele scan (log2 n roundings per output, the GPU's
order across lanes) failed 56 of its 224 run bf16/f16 cases, as cpu_ref's sequential scan (k roundings for output k)
failed 46: once a partial sum is rounded to 8 significant bits its error (up to 1/16 at magnitude 30) outweighs the
tolerance wherever the scan later cancels. Carrying the scan in f32 and rounding each output once (as triton-cpu
does) passes all of them, is shared by every backend from this one pass, and ties the result to no thread or warp
shape: each output is within half a bf16/f16 ulp of the f32 scan, plus that scan's own error (~n * 2^-24 relative).
It stays deterministic: the f32 scan is the backend's own fixed order.

Only single-operand scans whose combine region is exactly `r = addf(a, b)` or `r = mulf(a, b)` (either operand
order: IEEE addition and multiplication commute exactly) and `tt.scan.return r` are rewritten, as extf -> f32 scan
-> truncf (round to nearest even). Max/min are left alone: they round nothing, so f32 would only cost conversions.
Integer scans, f32/f64 scans, multi-operand scans and any other combine keep their own semantics.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Block, Module, Op, Region
from ..ir.types import FloatKind, FloatType, TensorType, f32
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace

#: element kinds whose scans are carried in f32
NARROW = (FloatKind.BF16, FloatKind.F16)
#: combine ops that round (and commute), so that a wider accumulator changes the result
ROUNDING_COMBINES = (O.AddF, O.MulF)


def widenable(op: O.Scan) -> type[Op] | None:
    """The combine op's class when `op` is a one-operand bf16/f16 scan whose combine is a single add or mul of the
    region's two arguments; else None."""
    if len(op.operands) != 1:
        return None
    elem = op.operands[0].type.element
    if not (isinstance(elem, FloatType) and elem.kind in NARROW):
        return None
    block = op.combine
    if len(block.ops) != 2:
        return None
    comb, term = block.ops
    if not isinstance(comb, ROUNDING_COMBINES) or not isinstance(term, O.ScanReturn):
        return None
    if set(comb.operands) != set(block.args) or len(comb.operands) != 2 or list(term.operands) != [comb.result]:
        return None
    return type(comb)


def widen_scan(op: O.Scan, combine_cls: type[Op]) -> None:
    """Replace `op` by extf -> the same scan over f32 -> truncf, inserted where `op` was."""
    src = op.operands[0]
    bld = Builder(op)
    wide_t = TensorType(src.type.shape, f32)
    wide = bld.cast(O.ExtF, src, f32)
    old_comb = op.combine.ops[0]
    block = Block([f32, f32])
    args = [block.args[op.combine.args.index(v)] for v in old_comb.operands]  # the region's operand order
    block.append(combine_cls(args, [f32], attrs=dict(old_comb.attrs), loc=old_comb.loc))
    block.append(O.ScanReturn([block.ops[0].result], [], loc=op.combine.ops[1].loc))
    scan = O.Scan([wide], [wide_t], attrs=dict(op.attrs), regions=[Region([block])], loc=op.loc)
    bld.block.insert(bld.block.ops.index(op), scan)
    narrow = bld.cast(O.TruncF, scan.result, src.type.element)
    replace(op, [narrow])


@ir_pass("wide-float-scan")
class WideFloatScan:
    """Carries bf16/f16 add/mul scans in f32, rounding once per output (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.Scan) and (cls := widenable(op)) is not None:
                widen_scan(op, cls)


__all__ = ["WideFloatScan", "widen_scan", "widenable"]
