"""CUDA-path goldens: compact records of what Triton's own CUDA backend computes for each conformance run.

A record holds each output's dtype, shape and the SHA-256 of its bytes; small outputs (≤ `FULL_BYTES`) are kept
whole, larger ones as values at seeded sample positions. `compare` checks a backend's outputs against a record under
the case's tolerance: whole outputs element by element, large ones by identical bytes or, failing that, at the
sampled positions (reported as such). The set is written by `tools/gpu/make_cuda_goldens.py` on a CUDA machine.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import torch

from .cases.tolerance import Tolerance

FULL_BYTES = 16 * 1024
SAMPLES = 256
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cuda_goldens.json.gz")

_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.bool,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
    )
}


def golden_tolerance(tol: Tolerance) -> Tolerance:
    """The bound between two backends that each meet `tol` against the exact result: both errors add up, and the
    CUDA path's fp32 division and transcendentals are approximate (PTX div.full / ex2.approx: up to 2 ulp), which
    is a known, legitimate difference. Exact comparisons stay exact."""
    if tol.kind == "ulp":
        return Tolerance("ulp", 2 * tol.amount + 2)
    if tol.kind == "normwise":
        return Tolerance("normwise", 2 * tol.amount)
    return tol


def key(case: str, dtype: str, shape: tuple[int, ...], seed: int) -> str:
    return f"{case}|{dtype}|{'x'.join(map(str, shape))}|{seed}"


def _sample_positions(n: int, seed: int) -> list[int]:
    if n <= SAMPLES:
        return list(range(n))
    g = torch.Generator().manual_seed(seed)
    return sorted(set(torch.randint(0, n, (SAMPLES,), generator=g).tolist()) | {0, n - 1})


def encode_output(t: torch.Tensor, seed: int) -> dict[str, Any]:
    t = t.detach().cpu().contiguous()
    raw = t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    rec: dict[str, Any] = {
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": list(t.shape),
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    if len(raw) <= FULL_BYTES:
        rec["data"] = base64.b64encode(raw).decode()
    else:
        pos = _sample_positions(t.numel(), seed)
        flat = t.view(-1)
        rec["positions"] = pos
        rec["samples"] = base64.b64encode(flat[pos].contiguous().view(torch.uint8).numpy().tobytes()).decode()
    return rec


def _decode(b64: str, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
    raw = bytearray(base64.b64decode(b64))
    if not raw:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape).clone()


@dataclass
class GoldenSet:
    meta: dict[str, Any] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str = DEFAULT_PATH) -> GoldenSet:
        with gzip.open(path, "rt") as f:
            data = json.load(f)
        return cls(data["meta"], data["records"])

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with gzip.open(path, "wt") as f:
            json.dump({"meta": self.meta, "records": self.records}, f, sort_keys=True)

    def add(
        self,
        case: str,
        dtype: str,
        shape: tuple[int, ...],
        seed: int,
        outcome: str,
        outputs: list[torch.Tensor],
        message: str = "",
    ) -> None:
        self.records[key(case, dtype, shape, seed)] = {
            "outcome": outcome,
            "message": message[:500],
            "outputs": [encode_output(o, seed) for o in outputs],
        }

    def get(self, case: str, dtype: str, shape: tuple[int, ...], seed: int) -> dict[str, Any] | None:
        return self.records.get(key(case, dtype, shape, seed))


def compare(record: dict[str, Any], outputs: list[torch.Tensor], tol: Tolerance) -> tuple[bool, float, str]:
    """(passed, max error, message) of `outputs` against a golden record."""
    if record["outcome"] not in ("pass", "fail"):
        return False, float("inf"), f"no CUDA golden: the CUDA path reported {record['outcome']}: {record['message']}"
    if len(outputs) != len(record["outputs"]):
        return False, float("inf"), f"{len(outputs)} outputs, golden has {len(record['outputs'])}"
    worst, msgs = 0.0, []
    for i, (got, rec) in enumerate(zip(outputs, record["outputs"])):
        dtype = _DTYPES[rec["dtype"]]
        got = got.detach().cpu().contiguous()
        if got.dtype != dtype or list(got.shape) != rec["shape"]:
            msgs.append(f"output #{i}: {got.dtype}{list(got.shape)} vs golden {rec['dtype']}{rec['shape']}")
            worst = float("inf")
            continue
        if "data" in rec:
            ok, err, msg = tol.compare(got, _decode(rec["data"], dtype, rec["shape"]))
        else:
            raw = got.view(-1).view(torch.uint8).numpy().tobytes()
            if hashlib.sha256(raw).hexdigest() == rec["sha256"]:
                continue
            pos = rec["positions"]
            want = _decode(rec["samples"], dtype, [len(pos)])
            ok, err, msg = tol.compare(got.view(-1)[pos].contiguous(), want)
            msg = f"(at {len(pos)} sampled positions) {msg}" if not ok else msg
        worst = max(worst, err)
        if not ok:
            msgs.append(f"output #{i}: {msg}")
    return not msgs, worst, "; ".join(msgs)
