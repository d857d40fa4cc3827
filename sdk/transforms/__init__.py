"""Shared SDK IR → SDK IR passes (one pass per file): Triton's semantics legalized once for every backend.

`legalization_passes` is what `TargetBackend.legalize_passes` runs in the `sdkir` stage before a backend's own
`ir_passes`, so every renderer sees the same, smaller set of ops. A backend that renders something natively narrows
or replaces a pass by overriding `legalize_passes`, never by copying the pass.
"""

from __future__ import annotations

from ..descriptor import TargetDescriptor
from ..ir import ops as O
from ..lowering import RuleTable
from ..options import Options
from ..pipeline import IRPass


def legalization_passes(descriptor: TargetDescriptor, options: Options, rules: RuleTable | None = None) -> list[IRPass]:
    """The shared legalizations, in the order they must run. An op whose own class has a rule in `rules` (the
    backend's table) is left to that rule."""
    from ..ir.dialects.device import ClockNs
    from .atomic_poll import AtomicPoll
    from .atomics import AtomicLoadStore
    from .bounds_check import BoundsCheck
    from .dot_scaled import DecomposeDotScaled
    from .fp8_arithmetic import Fp8Arithmetic
    from .fp8_casts import Fp8Casts
    from .inline_calls import InlineTensorCalls
    from .int_semantics import IntSemantics
    from .math_library import MathLibrary
    from .nan_arg_reduce import NanIgnoringArgReduce
    from .narrow_fma import NarrowFma
    from .uniform_division import UniformDivision
    from .unpack_map_elementwise import UnpackMapElementwise
    from .wide_float_scan import WideFloatScan

    def native(cls: type) -> bool:
        return rules is not None and rules.has_own(cls)

    # first: every later pass (the bounds checks too) sees a tensor-passing noinline function's body at its call sites
    # then argmax/argmin skip NaN (its compares are plain cmpf, legalized like any other below)
    # then fp8 constants folded (truncf of an f32 constant) and other fp8 truncf/extf made tt.fp_to_fp
    # then fp8 arithmetic in f32, so that the math library and every rule see f32 math only
    passes: list[IRPass] = [InlineTensorCalls()]
    if options.check_bounds:  # on the accesses as written, before any expansion makes more of them
        passes.append(BoundsCheck())
    passes += [
        NanIgnoringArgReduce(),
        Fp8Casts(),
        Fp8Arithmetic(),
        MathLibrary(rules=rules),
        NarrowFma(fp64="fp64" in descriptor.supported_dtypes),  # after the math library, which may make fmas
    ]
    if not native(O.DotScaled):
        passes.append(DecomposeDotScaled(accumulate_f64="fp64" in descriptor.supported_dtypes))
    if not native(O.AtomicPoll):  # before the atomic loads it expands into are themselves lowered
        passes.append(AtomicPoll(clock=rules is None or native(ClockNs)))
    if not (native(O.AtomicLoad) and native(O.AtomicStore)):
        passes.append(AtomicLoadStore(load=not native(O.AtomicLoad), store=not native(O.AtomicStore)))
    # always: the guarded division/shift/conversion it leaves is rendered by the backend's plain rule
    passes.append(IntSemantics())
    passes.append(UnpackMapElementwise())  # always: both backends render pack = 1 only
    passes.append(WideFloatScan())  # always: both backends' scans are sequential or Hillis-Steele in bf16
    if options.enable_fp_fusion:  # Triton's fp32 `/` is div.full (2 ulp): a splat divisor's reciprocal suffices
        passes.append(UniformDivision())
    return passes
