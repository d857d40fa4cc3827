"""A first launch in a probe process, so that PoCL's compiler crashing does not take the user's process down.

PoCL compiles a kernel's work-group function at the kernel's first enqueue, in the launching process. Its LLVM (15
in PoCL 3.1) has crashed there on kernels the SDK renders: a SIGSEGV in a MachineFunctionPass on a fuzz kernel with
two unrolled argmin/argmax loops and a scan (fuzz seed 302 kernel 384), an `Assertion 'exit != NULL'` abort in
`ParallelRegion.cc` on the attention tutorial with check_bounds. So on PoCL, compiling a kernel ends with one launch
of one program in a child process, with every pointer argument in the middle of a zeroed 64 MiB buffer and every
scalar zero. If the child dies, the compiler re-renders (render options the crash may depend on) or refuses the
kernel with the signal and PoCL's message; the launch the user makes then finds the work-group function in PoCL's
kernel cache. A child that does not answer in time (a kernel waiting on memory that zeroed arguments never set) is
killed and counts as surviving: the probe only ever turns a crash into a named error.

The child runs this file as a script (pyopencl and numpy only, no Triton), one JSON job per stdin line.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any

#: seconds a probe may take (PoCL's compile of the work-group function included) before it is called inconclusive
PROBE_TIMEOUT_S = 60.0
#: the zeroed buffer every pointer argument points into, at its middle (negative offsets stay inside too)
BUFFER_BYTES = 64 << 20


def probe_job(dev: Any, options: list[str], kernel: Any) -> dict:
    """The child's job for rendered kernel `kernel` (a render.program.RenderedKernel) on device `dev`."""
    return {
        "platform": dev.platform.name,
        "device": dev.name,
        "source": kernel.source,
        "options": options,
        "entry": kernel.entry,
        "local": kernel.local_size,
        "params": kernel.params,
        "scratch": kernel.global_scratch_stride,
        "asserts": bool(kernel.asserts),
        "clock": bool(kernel.clock_scale),
        "chunked": bool(kernel.chunked),
    }


class Prober:
    """One long-lived child per process (started on first use, restarted after it dies); jobs run one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._stderr: Any = None
        self._pid = os.getpid()

    def first_launch_crash(self, job: dict, timeout: float = PROBE_TIMEOUT_S) -> str | None:
        """None if the child launched the kernel (or did not answer in time); else how it died."""
        with self._lock:
            proc = self._child()
            try:
                proc.stdin.write(json.dumps(job) + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                return self._death(proc)
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout)
            sel.close()
            if not ready:
                self._stop(proc)
                return None
            line = proc.stdout.readline()
            if not line:
                return self._death(proc)
            return None

    def _child(self) -> subprocess.Popen:
        if self._pid != os.getpid():  # a forked process: the child and its pipes are the parent's
            self._proc, self._pid = None, os.getpid()
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stderr = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115 - open as long as the child lives
        self._proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            start_new_session=True,  # a Ctrl-C of the user's terminal is the parent's to handle
        )
        return self._proc

    def _stop(self, proc: subprocess.Popen) -> None:
        proc.kill()
        proc.wait()
        self._proc = None

    def _death(self, proc: subprocess.Popen) -> str:
        rc = proc.wait()
        self._proc = None
        self._stderr.seek(0)
        err = self._stderr.read().decode(errors="replace")
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        said = next((ln.strip() for ln in err.splitlines() if "Assertion" in ln or "error" in ln.lower()), "")
        return how + (f": {said[:300]}" if said else "")

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._stop(self._proc)


_PROBER: Prober | None = None


def first_launch_crash(job: dict) -> str | None:
    """The process's prober (see `Prober.first_launch_crash`)."""
    global _PROBER
    if _PROBER is None:
        _PROBER = Prober()
    return _PROBER.first_launch_crash(job)


# ---- the child -----------------------------------------------------------------------------------------------------


def _child_main() -> None:
    replies = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the kernel's printf goes nowhere, the replies go to the parent
    contexts: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
    for line in sys.stdin:
        try:
            _launch_once(json.loads(line), contexts)
            reply = "ok"
        except Exception as e:  # noqa: BLE001 - not a crash: the parent goes on as if the probe had passed
            reply = f"not probed: {type(e).__name__}: {e}".replace("\n", " ")
        replies.write(reply + "\n")
        replies.flush()


def _launch_once(job: dict, contexts: dict) -> None:
    """One program of the job's kernel, on zeroed memory; returns when it has run."""
    import numpy as np
    import pyopencl as cl

    key = (job["platform"], job["device"])
    if key not in contexts:
        dev = next(d for p in cl.get_platforms() if p.name == key[0] for d in p.get_devices() if d.name == key[1])
        ctx = cl.Context([dev])
        contexts[key] = (dev, ctx, cl.CommandQueue(ctx, dev))
    dev, ctx, queue = contexts[key]
    prg = cl.Program(ctx, job["source"]).build(options=job["options"], devices=[dev])
    kernel = cl.Kernel(prg, job["entry"])
    mf = cl.mem_flags
    host = np.zeros(BUFFER_BYTES, dtype=np.uint8)  # calloc'ed: its pages are zero until written
    args: list[Any] = []
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)
    for p in job["params"]:
        if p[0] == "ptr":
            args += [buf, np.uint64(BUFFER_BYTES // 2)]
        else:
            args.append(np.zeros(1, dtype=p[1])[0])
    if job["scratch"]:
        args.append(cl.Buffer(ctx, mf.READ_WRITE, job["scratch"]))
    if job["asserts"]:
        args.append(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(8, dtype=np.int32)))
    if job["clock"]:
        args.append(np.uint64(1 << 32))
    if job["chunked"]:
        args += [np.int32(1)] * 3  # the grid's size: the one program launched
    kernel.set_args(*args)
    local = int(job["local"])
    cl.enqueue_nd_range_kernel(queue, kernel, (local, 1, 1), (local, 1, 1)).wait()
    queue.finish()


if __name__ == "__main__":
    _child_main()
