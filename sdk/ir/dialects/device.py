"""`device.*`: SDK-only ops for device services Triton's TTIR reaches through target intrinsics (a GPU's global
timer), so that shared legalizations can name them and each backend renders them its own way or not at all.

They read and print in MLIR's generic form: `%t = "device.clock_ns"() : () -> i64`. Triton's parser does not know
them; they exist only between the SDK's legalizations and a backend's rules.
"""

from __future__ import annotations

from ..core import IRVerificationError, Op, register_op
from ..fields import Result
from ..types import i64


@register_op
class ClockNs(Op):
    """A monotonic clock in nanoseconds, as i64 (wrapping is never reached: 2^63 ns is 292 years). Only differences
    of two readings mean anything; the epoch is the device's. Not pure: two readings may differ."""

    name = "device.clock_ns"
    result = Result()

    def verify_(self) -> None:
        if self.result.type != i64:
            raise IRVerificationError(f"reads the clock as {self.result.type}, not i64", self)


__all__ = ["ClockNs"]
