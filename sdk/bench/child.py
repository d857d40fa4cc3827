"""A peer timed in its own process, serving one round at a time so that the parent can interleave it with ours.

    python -m triton_backend_sdk.bench.child numpy|interpreter

Two peers cannot run in the parent: numpy's OpenBLAS reads OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE when it loads
(this host sets both, and they slow it), so it runs where both are unset; Triton reads TRITON_INTERPRET at import.
One child serves every case of a run (starting Python with torch and Triton costs seconds). Protocol, a JSON object
per line: `{"case": NAME, "size": {...}}` sets a case up and answers `{"ready": {versions}}`; `{"reps": N}` times N
warmed calls back to back (the median) and answers `{"ms": ...}`; end of input ends it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from .timing import median_ms


def _numpy(case: str, size: dict[str, int]) -> tuple[Callable[[], object], dict[str, Any]]:
    """sgemm (fp32) or the fp16-input matmul as numpy does it: upcast, then sgemm (numpy's fp16 matmul is no BLAS)."""
    import numpy as np

    n = size["n"]
    rng = np.random.default_rng(0)
    if case == "matmul_fp16_acc32":
        a, b = (rng.standard_normal((n, n)).astype(np.float16) for _ in range(2))
        fn: Callable[[], object] = lambda: a.astype(np.float32) @ b.astype(np.float32)
    else:
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        c = np.empty((n, n), np.float32)
        fn = lambda: np.matmul(a, b, out=c)
    return fn, {"numpy": np.__version__}


def _interpreted(case: str, size: dict[str, int]) -> tuple[Callable[[], object], dict[str, Any]]:
    import triton

    from .cases import get

    if not triton.knobs.runtime.interpret:
        raise SystemExit("the interpreter child needs TRITON_INTERPRET=1 in its environment")
    return get(case).build(size, "interpreter").ours, {"triton": triton.__version__}


def main(argv: list[str]) -> int:
    setup = _numpy if argv[0] == "numpy" else _interpreted
    fn: Callable[[], object] | None = None
    for line in sys.stdin:
        request = json.loads(line)
        if "case" in request:
            fn, info = setup(request["case"], request["size"])
            fn()
            print(json.dumps({"ready": info}), flush=True)
        elif fn is not None:
            print(json.dumps({"ms": median_ms(fn, int(request["reps"]))}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
