"""`device.clock_ns` (the clock of `tt.atomic_poll`'s timeout) on devices that have a clock OpenCL C can read.

OpenCL C 1.2 has no clock, so the rule lives in its own table, `CLOCK_RULES`, which `rules_for` gives only to a
device whose descriptor names one of the dialect's `clocks` (render/language.py): on any other device the shared
legalization still refuses a run-time timeout by name (sdk/transforms/atomic_poll.py).

Work-item 0 reads the clock and shares the reading (as a volatile scalar load is shared), so every work-item of a
group takes the same branch of the poll's loop and meets the same barriers.

A counter of cycles is turned into nanoseconds in the kernel: ns = cycles × scale / 2^32 (128-bit product through
`mul_hi`, exact for any reading below 2^64 ns), with `scale`, the device's nanoseconds per cycle in 32.32 fixed point,
a hidden last kernel parameter the launcher passes (measured once per process, backends/opencl/clock.py). The factor
stays out of the source, so the program and its cache key are the same in every process.
"""

from __future__ import annotations

from triton_backend_sdk.ir.dialects.device import ClockNs
from triton_backend_sdk.lowering import RuleTable

from .context import RenderContext
from .language import CStyleLanguage
from .memory import _shared_from_item0
from .rules import OPENCL_RULES

#: the hidden parameter of a kernel that scales a cycle counter: nanoseconds per cycle × 2^32, as ulong
SCALE = "tb_clock_scale"
#: OpenCL's table plus the clock rule, for devices with a clock
CLOCK_RULES = OPENCL_RULES.derive("opencl")


def rules_for(lang: CStyleLanguage, features: frozenset[str]) -> RuleTable:
    """The rule table of a device: with `device.clock_ns` where the dialect can read one of its clocks."""
    return CLOCK_RULES if lang.clock(features) is not None else OPENCL_RULES


@CLOCK_RULES.register(ClockNs)
def render_clock_ns(ctx: RenderContext, op: ClockNs) -> None:
    clock = ctx.lang.clock(ctx.features)
    if clock is None:
        raise ctx.unsupported("device.clock_ns on a device with no clock OpenCL C can read", op)
    raw = ctx.fresh("clk")
    ns = raw
    if clock.cycles:
        ctx.clock_scale = True
        ns = f"(({ctx.lang.call('mul_hi', raw, SCALE)} << 32) | (({raw} * {SCALE}) >> 32))"
    ctype = ctx.ctype(op.result)
    read = clock.read.format(out=raw)
    _shared_from_item0(ctx, op.result, ctype, lambda cell: f"{{ ulong {raw}; {read} {cell} = ({ctype}){ns}; }}")


__all__ = ["CLOCK_RULES", "SCALE", "render_clock_ns", "rules_for"]
