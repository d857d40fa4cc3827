"""Integer edge cases on every backend against what Triton's CUDA path computed for them (recorded on an H200 by
tools/gpu/make_int_semantics_goldens.py): x/0, x%0, INT_MIN/-1, shifts by >= the width and by negative amounts,
NaN/inf/out-of-range float→int for every int width, signed and unsigned. A Python statement of the same semantics
(`_reference`) is checked against the recording too, so the rules sdk/transforms/int_semantics.py implements are
written down where they can be read."""

from __future__ import annotations

import json
import math
import os

import int_semantics_cases as C
import pytest

_GOLDENS = os.path.join(os.path.dirname(__file__), "data", "int_semantics_cuda.json")


def _goldens() -> dict[str, list[int]]:
    with open(_GOLDENS) as f:
        return json.load(f)["cases"]


def _wrap(v: int, w: int, signed: bool) -> int:
    v %= 1 << w
    return v - (1 << w) if signed and v >> (w - 1) else v


def _binary(op: str, dtype: str, a: int, b: int) -> int:
    w, signed = C.width(dtype), dtype in C.SIGNED
    if op in ("div", "rem"):
        if b == 0:  # all ones; 64-bit dividends below 2^32 take the 32-bit instruction's all ones, zero-extended
            return _wrap(0xFFFFFFFF if w == 64 and 0 <= a < 1 << 32 else -1, w, signed)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return _wrap(q if op == "div" else a - q * b, w, signed)
    amount = b % (1 << min(w, 32))  # unsigned; a 64-bit shift reads the amount's low 32 bits
    if op == "shl":
        return 0 if amount >= w else _wrap(a << amount, w, signed)
    if signed:
        return a >> min(amount, w - 1)
    return 0 if amount >= w else a >> amount


def _float_to_int(src: str, dtype: str, x: float) -> int:
    w, signed = C.width(dtype), dtype in C.SIGNED
    cw = max(w, 16)  # saturate to 16 bits at least, then keep the low w bits
    lo, hi = (-(1 << (cw - 1)), (1 << (cw - 1)) - 1) if signed else (0, (1 << cw) - 1)
    if math.isnan(x):
        v = 1 << (cw - 1) if src == "float64" or cw == 64 else 0
    else:
        v = min(max(math.trunc(x) if math.isfinite(x) else (hi if x > 0 else lo), lo), hi)
    return _wrap(v, w, signed)


def _reference(key: tuple[str, str, str]) -> list[int]:
    kind, a, b = key
    if kind == "binary":
        x, y = C.binary_case(b, a)
        return [_binary(b, a, p, q) for p, q in zip(C.int_values(x, a), C.int_values(y, a))]
    return [_float_to_int(a, b, v) for v in C.float_inputs(a).double().tolist()]


KEYS = C.all_keys()
IDS = [C.key_name(k) for k in KEYS]


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_reference_states_the_cuda_semantics(key: tuple[str, str, str]) -> None:
    assert _reference(key) == _goldens()[C.key_name(key)]


#: a bf16 tile loaded under a mask and read more than once is buffered through a `phi bfloat`, which x86 legalizes
#: with compiler-rt's `__truncsfbf2`, absent from cpu_ref's JIT (any kernel reading a bf16 load twice: memory.py)
_CPU_REF_BF16_LOAD = "cpu_ref: a masked bf16 load read twice does not link (__truncsfbf2)"


@pytest.mark.parametrize("key", KEYS, ids=IDS)
def test_backend_matches_cuda(backend: str, key: tuple[str, str, str]) -> None:
    if backend == "cpu_ref" and key[:2] == ("float_to_int", "bfloat16"):
        pytest.xfail(_CPU_REF_BF16_LOAD)
    got = C.run_key(key, "cpu")
    want = _goldens()[C.key_name(key)]
    bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, want)) if g != e]
    assert not bad, f"{len(bad)} of {len(want)} differ (index, got, CUDA): {bad[:8]}"
