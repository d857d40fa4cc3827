"""Starting and driving the child-process peers of `child.py` from the runner (a `Sampler` per child)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self

#: OpenBLAS reads these at load time; this host sets both, and they slow its sgemm (issue 13), so numpy runs in a
#: child without them. Never changed in this process (tests and CI keep the host's settings).
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


class ChildError(RuntimeError):
    """A child peer that failed to start or to answer; the message ends with its stderr's last lines."""


def child_env(kind: str) -> dict[str, str]:
    env = dict(os.environ)
    if kind == "numpy":
        for name in OPENBLAS_OVERRIDES:
            env.pop(name, None)
        env["OPENBLAS_VERBOSE"] = "2"  # OpenBLAS prints "Core: <kernel set>" on stderr at load
    else:
        env["TRITON_INTERPRET"] = "1"
    return env


class Child:
    """One peer process: `setup` a case, then call it with a repetition count to time one round (the median of
    that many calls)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - lives as long as the child; close()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "triton_backend_sdk.bench.child", kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=child_env(kind),
            text=True,
        )

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # the child is gone: _reply says why
        return self._reply()

    def setup(self, case: str, size: dict[str, int]) -> dict[str, Any]:
        """Build `case` at `size` in the child (one call, untimed); the child's versions."""
        return self._ask({"case": case, "size": dict(size)})["ready"]

    def _reply(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            raise ChildError(f"{self.kind} peer exited with status {self._proc.returncode}: {self.stderr()[-800:]}")
        return json.loads(line)

    def __call__(self, reps: int) -> float:
        return float(self._ask({"reps": reps})["ms"])

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()

    def openblas_core(self) -> str | None:
        """The kernel set OpenBLAS picked (its "Core: ..." line), None when it printed none."""
        found = re.findall(r"^Core: (\S+)", self.stderr(), re.MULTILINE)
        return found[-1] if found else None

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._stderr.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
