"""Worker processes, one backend each: a job is sent as a JSON line, the answer read with a timeout. A worker that
dies (a crash: a signal or an exit) or does not answer in time (a hang) is reported for that job and replaced."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from .worker import backend_env


@dataclass
class Reply:
    status: str  # "ok", "error" (a Python exception in the worker), "crash", "timeout"
    info: dict[str, Any]
    seconds: float


class Worker:
    """One worker process for `backend`; stderr goes to `log_path` (its tail is kept for a crash report)."""

    def __init__(self, backend: str, log_path: str, env: dict[str, str] | None = None) -> None:
        self.backend = backend
        self.log_path = log_path
        self.env = dict(os.environ if env is None else env, **backend_env(backend))
        if backend != "interpreter":
            self.env.pop("TRITON_INTERPRET", None)
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.jobs = 0

    def start(self, timeout: float = 300.0) -> None:
        self.log = open(self.log_path, "a")  # noqa: SIM115 - the worker's stderr for its lifetime
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "triton_backend_sdk.fuzz.worker", self.backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=self.env,
            start_new_session=True,  # a Ctrl-C reaches the fuzzer, which finishes the jobs under way
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()
        first = self._next(timeout)
        if first is None or json.loads(first).get("status") != "ready":
            raise RuntimeError(f"{self.backend} worker did not start (see {self.log_path})")

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def _next(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return "TIMEOUT"

    def _tail(self) -> list[str]:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-3000:].splitlines()[-25:]
        except OSError:
            return []

    def run(self, job: dict[str, Any], timeout: float) -> Reply:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        t0 = time.perf_counter()
        self.jobs += 1
        with open(self.log_path, "a") as f:
            f.write(f"--- job {job.get('id')}: {job['file']}\n")
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        line = self._next(timeout)
        dt = time.perf_counter() - t0
        if line == "TIMEOUT":
            self.stop()
            return Reply("timeout", {"error": f"no answer in {timeout:.0f} s", "stderr": self._tail()}, dt)
        if line is None:
            rc = self.proc.wait()
            self.proc = None
            return Reply(
                "crash", {"error": f"worker died (exit status {rc})", "returncode": rc, "stderr": self._tail()}, dt
            )
        info = json.loads(line)
        return Reply(info.pop("status"), info, dt)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.stop()
