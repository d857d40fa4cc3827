"""`device.clock_ns`: the host's monotonic clock, read with C's `clock_gettime` (the process's libc, as the object is
linked against it when loaded). `CLOCK_MONOTONIC`'s number is the host's own (Python's `time` module knows it);
`struct timespec` is two 64-bit fields on the LP64 hosts cpu_ref runs on."""

from __future__ import annotations

import time

from llvmlite import ir
from triton_backend_sdk.ir.dialects.device import ClockNs

from .context import LoweringContext
from .rules import RULES
from .types import I32, I64, PTR

_TIMESPEC = ir.LiteralStructType([I64, I64])


@RULES.register(ClockNs)
def lower_clock_ns(ctx: LoweringContext, op: ClockNs) -> None:
    b = ctx.b
    ts = ctx.alloca(_TIMESPEC, 1, "timespec")
    b.call(ctx.intrinsic("clock_gettime", I32, [I32, PTR]), [ir.Constant(I32, time.CLOCK_MONOTONIC), ts])
    field = lambda i: b.load(b.gep(ts, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=_TIMESPEC), typ=I64)
    ns = b.add(b.mul(field(0), ir.Constant(I64, 1_000_000_000)), field(1))
    ctx.define(op.result, ns)
