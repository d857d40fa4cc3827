"""A fuzz worker process: runs generated kernel files on one backend, one job per stdin line, and answers one JSON
line per job on stdout (outputs go to the job's result file). A crash or hang ends only this process; pool.py
notices and starts another.

    python -m triton_backend_sdk.fuzz.worker BACKEND       (the environment from `backend_env(BACKEND)`)

BACKEND is an SDK backend name (`cpu_ref`, `opencl`), a variant (`opencl@wg128`: 128 work-items per program), or
`interpreter` (Triton's interpreter with the reference semantics of interp_ref.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from typing import Any

INTERPRETER = "interpreter"
#: environment of each backend variant (as tests/conftest.py's VARIANTS)
VARIANT_ENV = {"opencl@wg128": {"TRITON_OPENCL_WORK_ITEMS": "128"}}


def backend_env(backend: str) -> dict[str, str]:
    """Environment entries selecting `backend` in a fresh process."""
    if backend == INTERPRETER:
        return {"TRITON_INTERPRET": "1"}
    env = {"TRITON_DEFAULT_BACKEND": backend.split("@")[0]}
    env.update(VARIANT_ENV.get(backend, {}))
    return env


def load_kernel(path: str) -> tuple[Any, Any]:
    """(spec, jit function) of a generated kernel file."""
    from .spec import KernelSpec

    name = "tsdk_fuzz_" + os.path.basename(path)[:-3].replace("-", "_") + f"_{abs(hash(path)) % 10**8}"
    mod_spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.modules[name] = mod
    mod_spec.loader.exec_module(mod)
    spec = KernelSpec.from_json(mod.SPEC)
    return spec, getattr(mod, spec.name)


def run_kernel(
    spec: Any, fn: Any, runs: int, interpreter: bool, phase: list[str] | None = None
) -> tuple[list[list[Any]], float, float]:
    """Outputs (guarded buffers) of `runs` launches; (outputs per run, compile seconds, run seconds). `phase[0]`
    says how far it got ("compile", then "run") when it raises."""
    phase = phase if phase is not None else [""]
    import numpy as np

    from .inputs import kernel_args, make_inputs, make_outputs

    inputs = make_inputs(spec)
    kw = {"BM": spec.BM, "BN": spec.BN, "enable_fp_fusion": False, "opt_level": spec.opt_level}
    grid = (spec.grid,)
    t0 = time.perf_counter()
    phase[0] = "compile"
    if not interpreter:
        outs = make_outputs(spec)
        fn.warmup(*kernel_args(spec, inputs, [o for _, o in outs]), grid=grid, **kw)
    t1 = time.perf_counter()
    phase[0] = "run"
    results = []
    for run in range(runs):
        if interpreter:
            from .interp_ref import set_run

            set_run(run)
        outs = make_outputs(spec)
        with np.errstate(all="ignore"):
            fn[grid](*kernel_args(spec, inputs, [o for _, o in outs]), **kw)
        results.append([buf.clone() for buf, _ in outs])
    return results, t1 - t0, time.perf_counter() - t1


def _job(job: dict[str, Any], interpreter: bool) -> dict[str, Any]:
    import torch

    phase = ["load"]
    try:
        spec, fn = load_kernel(job["file"])
        results, compile_s, run_s = run_kernel(spec, fn, job.get("runs", 1), interpreter, phase)
    except Exception as e:  # noqa: BLE001 - every failure is a result to report
        tb = traceback.format_exc().splitlines()
        return {"status": "error", "phase": phase[0], "error": f"{type(e).__name__}: {e}"[:4000], "traceback": tb[-30:]}
    torch.save(results, job["result"])
    return {"status": "ok", "compile_s": round(compile_s, 3), "run_s": round(run_s, 3)}


def main(argv: list[str]) -> int:
    backend = argv[0]
    interpreter = backend == INTERPRETER
    import torch  # noqa: F401 - imported before the first job so that its time is not a job's
    import triton  # noqa: F401

    if interpreter:
        from .interp_ref import install

        install()
    # replies go to the original stdout; anything else printed there (a kernel, a library) goes to stderr
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    proto.write(json.dumps({"status": "ready", "pid": os.getpid()}) + "\n")
    proto.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        reply = _job(job, interpreter)
        reply["id"] = job.get("id")
        proto.write(json.dumps(reply) + "\n")
        proto.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
