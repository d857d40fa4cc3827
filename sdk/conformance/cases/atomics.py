"""Atomics across programs running on different threads: `tt.atomic_rmw` (every op, int32/int64/uint32/uint64 and
fp16/bf16/fp32/fp64 where Triton accepts them) and `tt.atomic_cas` (spin locks guarding a non-atomic update).

Values are chosen so that the final memory is independent of the order the programs ran in: integer sums, float
sums of small integers (exact in every float type at these sizes), max/min, bitwise ops; xchg and the returned old
values are checked where each address is hit by exactly one element.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import TORCH, np_of, rand
from .tolerance import EXACT

BLOCK = 64
SLOTS = 8


@triton.jit
def rmw_kernel(x_ptr, acc_ptr, n, OP: tl.constexpr, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    p = acc_ptr + offs % SLOTS
    if OP == "add":
        tl.atomic_add(p, x, mask=mask)
    elif OP == "max":
        tl.atomic_max(p, x, mask=mask)
    elif OP == "min":
        tl.atomic_min(p, x, mask=mask)
    elif OP == "and":
        tl.atomic_and(p, x, mask=mask)
    elif OP == "or":
        tl.atomic_or(p, x, mask=mask)
    elif OP == "xor":
        tl.atomic_xor(p, x, mask=mask)
    else:
        tl.static_assert(False, "unknown op")


def _rmw_case(
    op: str, dtypes: tuple[str, ...], shapes: tuple[tuple[int, ...], ...] = ((1,), (1000,), (5000,)), suffix: str = ""
) -> Case:
    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        n = shape[0]
        if op in ("and", "or", "xor"):
            x = torch.randint(0, 1 << 30, (n,), generator=g, dtype=torch.int64).to(TORCH[dtype])
            init = torch.full((SLOTS,), -1 if op == "and" else 5, dtype=torch.int64).to(TORCH[dtype])
        else:
            x = rand((n,), dtype, g, 1, 8, signed=not dtype.startswith("uint"))
            x = torch.round(x.double()).to(TORCH[dtype]) if x.dtype.is_floating_point else x
            init = rand((SLOTS,), dtype, g, 1, 8, signed=not dtype.startswith("uint"))
            init = torch.round(init.double()).to(TORCH[dtype]) if init.dtype.is_floating_point else init
        return Launch([x, init, n], (triton.cdiv(n, BLOCK),), (1,), {"OP": op, "SLOTS": SLOTS, "BLOCK": BLOCK})

    def reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
        bf16 = dtype == "bfloat16"  # numpy has no bfloat16; these small integers are exact in float32
        x = np_of(launch.args[0].float() if bf16 else launch.args[0])
        acc = np_of(launch.args[1].float() if bf16 else launch.args[1]).copy()
        with np.errstate(over="ignore"):
            for i, v in enumerate(x):
                s = i % SLOTS
                acc[s] = {
                    "add": lambda a, b: a + b,
                    "max": max,
                    "min": min,
                    "and": lambda a, b: a & b,
                    "or": lambda a, b: a | b,
                    "xor": lambda a, b: a ^ b,
                }[op](acc[s], v)
        out = torch.from_numpy(acc)
        return [out.to(torch.bfloat16) if bf16 else out]

    return register(Case(f"atomic_{op}{suffix}", "tt.atomic_rmw", rmw_kernel, dtypes, shapes, build, reference, EXACT))


_rmw_case("add", ("int32", "int64", "uint32", "uint64", "float32", "float64"))
# half types: few enough additions per address (25 of at most 8 in magnitude, plus the start value) that every
# partial sum is an integer below 256, exact in bf16 and fp16 whatever order the threads add in
_rmw_case("add", ("float16", "bfloat16"), ((1,), (200,)), suffix="_half")
_rmw_case("max", ("int32", "int64", "uint32", "uint64", "float32", "float64"))
_rmw_case("min", ("int32", "int64", "uint32", "uint64", "float32", "float64"))
for _op in ("and", "or", "xor"):
    _rmw_case(_op, ("int32", "int64", "uint32", "uint64"))


@triton.jit
def xchg_kernel(x_ptr, acc_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    old = tl.atomic_xchg(acc_ptr + offs, x, mask=mask)
    prev = tl.atomic_add(acc_ptr + offs, x, mask=mask, sem="relaxed")
    tl.store(old_ptr + offs, old + prev, mask=mask)


def _xchg_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x, init = rand((n,), dtype, g, 1, 8), rand((n,), dtype, g, 1, 8)
    return Launch([x, init, torch.empty_like(x), n], (triton.cdiv(n, BLOCK),), (1, 2), {"BLOCK": BLOCK})


register(
    Case(
        "atomic_xchg_returns_old",
        "tt.atomic_rmw",
        xchg_kernel,
        ("int32", "int64", "float32", "float64"),
        ((1,), (300,)),
        _xchg_build,
        lambda launch, d: [launch.args[0] * 2, launch.args[1] + launch.args[0]],
        EXACT,
        note="each address is exchanged by exactly one element",
    )
)


@triton.jit
def cas_lock_kernel(lock_ptr, total_ptr, count_ptr, x_ptr, ROUNDS: tl.constexpr):
    """Each program adds its value ROUNDS times to an unprotected total under a spin lock built on atomic_cas."""
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    for _ in range(ROUNDS):
        while tl.atomic_cas(lock_ptr, 0, 1) == 1:
            pass
        t = tl.load(total_ptr, volatile=True)  # non-atomic read-modify-write, safe only under the lock
        tl.store(total_ptr, t + v)
        c = tl.load(count_ptr, volatile=True)
        tl.store(count_ptr, c + 1)
        tl.atomic_xchg(lock_ptr, 0)


def _cas_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x = torch.randint(1, 100, (n,), generator=g, dtype=torch.int64).to(TORCH[dtype])
    zero = torch.zeros(1, dtype=TORCH[dtype])
    return Launch(
        [torch.zeros(1, dtype=torch.int32), zero.clone(), torch.zeros(1, dtype=torch.int32), x],
        (n,),
        (1, 2),
        {"ROUNDS": 20},
    )


register(
    Case(
        "atomic_cas_spinlock",
        "tt.atomic_cas",
        cas_lock_kernel,
        ("int32", "int64", "float32"),
        ((1,), (64,), (500,)),
        _cas_build,
        lambda launch, d: [
            (launch.args[3].double().sum() * 20).to(TORCH[d]).reshape(1),
            torch.tensor([launch.grid[0] * 20], dtype=torch.int32),
        ],
        EXACT,
        note="the interpreter runs programs one after another: it never contends for the lock",
    )
)


@triton.jit
def cas_each_kernel(p_ptr, cmp_ptr, val_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    old = tl.atomic_cas(p_ptr + offs, tl.load(cmp_ptr + offs), tl.load(val_ptr + offs))
    tl.store(old_ptr + offs, old)


def _cas_each_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    cur = rand((n,), dtype, g, 1, 100)  # cur + 1 is exact (and differs from cur) in every type
    cmp = torch.where(torch.arange(n) % 2 == 0, cur, cur + 1)
    return Launch(
        [cur, cmp, rand((n,), dtype, g, 1, 100), torch.empty_like(cur)], (n // BLOCK,), (0, 3), {"BLOCK": BLOCK}
    )


register(
    Case(
        "atomic_cas_16bit",
        "tt.atomic_cas",
        cas_each_kernel,
        ("int16", "float16", "bfloat16"),
        ((BLOCK,), (1024,)),
        _cas_each_build,
        lambda launch, d: [
            torch.where(torch.arange(launch.args[0].numel()) % 2 == 0, launch.args[2], launch.args[0]),
            launch.args[0],
        ],
        EXACT,
        note="even elements match and are swapped, odd ones keep their value; all return the old value; "
        "neighbours share a 32-bit word (a backend emulating 16-bit atomics must keep them intact)",
    )
)
