"""Record what Triton's CUDA path computes for the integer-semantics edge cases of tests/int_semantics_cases.py.

Run on a CUDA machine from the repository root (the SDK need not be installed; Triton uses its CUDA backend):

    python3 tools/gpu/make_int_semantics_goldens.py tests/data/int_semantics_cuda.json

Writes {"versions": {...}, "cases": {"kind|a|b": [results as integers]}}; the tests compare every backend with it.
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import int_semantics_cases as C
    import torch
    import triton

    cases = {C.key_name(k): C.run_key(k, "cuda") for k in C.all_keys()}
    versions = {
        "triton": triton.__version__,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(),
    }
    with open(sys.argv[1], "w") as f:
        json.dump({"versions": versions, "cases": cases}, f, indent=0, sort_keys=True)
    print(f"{len(cases)} cases written to {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
