"""Where a tile load may be read: at its consumer instead of its own position.

Backends that evaluate tiles lazily (a generator per element, fused into the loop of whoever consumes it) can read a
load's elements inside its consumer's loop — for a vector add, one loop of loads, add and store instead of buffers
filled first. That moves the reads later, so it is only sound when no write can happen in between: the value must
flow through single-use pure ops of the same block into one sink, and every op between the load and that sink must
be pure or another (non-volatile) load.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Op


def load_sink(load: O.Load) -> Op | None:
    """The op that consumes `load`'s value (through single-use pure tensor ops of the same block) if the load can be
    read there; None when it cannot."""
    block = load.parent
    if block is None or load.is_volatile or not load.result.type.is_tensor:
        return None
    v = load.result
    while True:
        if len(v.uses) != 1:
            return None
        user = v.uses[0][0]
        if user.parent is not block:
            return None
        if not (user.pure and not user.regions and len(user.results) == 1 and user.results[0].type.is_tensor):
            break
        v = user.results[0]
    ops = block.ops
    start, end = ops.index(load), ops.index(user)
    for o in ops[start + 1 : end]:
        if not ((o.pure and not o.regions) or (isinstance(o, O.Load) and not o.is_volatile)):
            return None
    return user
