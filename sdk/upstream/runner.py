"""Run Triton's upstream language tests on one backend: stage, select, run pytest in workers, classify.

Each run gets ``--device cpu``, ``TRITON_DEFAULT_BACKEND=<backend>`` and a fresh ``TRITON_CACHE_DIR``; tests run
in pytest-xdist worker processes so that a test that kills its process is reported as that test's crash (xdist
restarts the worker) rather than ending the run, and pytest-timeout bounds each test.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .manifest import Manifest, default_manifest_path
from .report import Report, classify
from .staging import DEFAULT_FILES, stage

# Environment of the staged watchdog plugin (watchdog.py): where it records the tests it ends, and after how long.
RECORD = "TRITON_SDK_TIMEOUT_RECORD"
LIMIT = "TRITON_SDK_TIMEOUT_HARD_S"


class RunError(RuntimeError):
    """The suite could not be run (a missing plugin, nothing selected, pytest ended without a report)."""


def _require(module: str, package: str, why: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise RunError(f"{package} is not installed ({why}): pip install {package}  (or the SDK's [dev] extra)")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _collect(cwd: Path, paths: list[str], env: dict, k: str | None, log: Path) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--device", "cpu"]
    cmd += [*paths] + (["-k", k] if k else [])
    proc = subprocess.run(cmd, check=False, cwd=cwd, env=env, capture_output=True, text=True)
    log.write_text(proc.stdout + proc.stderr)
    ids = [line.strip() for line in proc.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if proc.returncode not in (0, 5):
        raise RunError(f"collecting the tests failed (exit {proc.returncode}):\n{_tail(log)}")
    return ids


def resolve_manifest(backend: str, path: str | None) -> Manifest:
    """``path`` if given, else the manifest shipped with an SDK backend, else an empty one."""
    chosen = path or default_manifest_path(backend)
    return Manifest.load(chosen) if chosen else Manifest([], None)


def run(
    triton_src: str,
    backend: str,
    *,
    rev: str | None = None,
    files: tuple[str, ...] = DEFAULT_FILES,
    workers: int = 2,
    timeout: float = 300,
    k: str | None = None,
    sample: int = 1,
    offset: int = 0,
    ids_file: str | None = None,
    manifest: str | None = None,
    junit: str | None = None,
    work_dir: str | None = None,
    echo: bool = True,
) -> Report:
    """Stage the suite, run it, return the classified report (``work_dir`` keeps the staged tree and logs)."""
    _require("pytest_timeout", "pytest-timeout", "per-test timeouts")
    if workers > 0:
        _require("xdist", "pytest-xdist", "worker processes that isolate crashes")
    expectations = resolve_manifest(backend, manifest)
    root = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="triton-upstream-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        cwd, paths, info = stage(triton_src, root / "src", tuple(files), rev)
        shutil.copyfile(Path(__file__).with_name("watchdog.py"), cwd / "_sdk_watchdog.py")
        record = root / "timeouts.txt"
        record.unlink(missing_ok=True)
        env = dict(os.environ, TRITON_DEFAULT_BACKEND=backend, TRITON_CACHE_DIR=str(root / "cache"))
        if workers > 0:  # in-process, ending the stuck process would end the run
            env.update({RECORD: str(record), LIMIT: str(timeout + max(10.0, timeout / 5))})
        for var in ("TRITON_INTERPRET", "PYTEST_ADDOPTS", "TBS_FAULT_LOG_DIR"):  # the run's options are its own
            env.pop(var, None)
        shutil.rmtree(root / "cache", ignore_errors=True)
        selection = [*paths] + (["-k", k] if k else [])
        if ids_file or sample > 1 or offset:
            if ids_file:
                ids = [line.strip() for line in Path(ids_file).read_text().splitlines() if "::" in line]
            else:
                ids = _collect(cwd, paths, env, k, root / "collect.log")[offset::sample]
            if not ids:
                raise RunError(f"no test matched (-k {k!r}); see {root / 'collect.log'}")
            (root / "ids.txt").write_text("\n".join(ids) + "\n")
            selection = [f"@{root / 'ids.txt'}"]
        junit_path = Path(junit).resolve() if junit else root / "junit.xml"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--device",
            "cpu",
            f"--timeout={timeout}",
            "--timeout-method=signal",
            "-p",
            "_sdk_watchdog",
            f"--junitxml={junit_path}",
            "-o",
            "junit_family=xunit2",
        ]
        if workers > 0:
            cmd += ["-n", str(workers), "--max-worker-restart=100000"]
        log = root / "pytest.log"
        if echo:
            print(
                f"upstream-tests: {backend} on the suite at {info.commit[:12]} (version {info.version}), "
                f"triton wheel {_version('triton')}; log {log}",
                flush=True,
            )
        start = time.monotonic()
        interrupted = False
        with open(log, "w") as out:
            # its own session: a Ctrl-C or `timeout -s INT` reaches pytest once, forwarded below, not twice
            proc = subprocess.Popen(
                cmd + selection, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
            try:
                code = proc.wait()
            except KeyboardInterrupt:  # stopped at a time limit: let pytest end its tests and write the JUnit file
                interrupted = True
                proc.send_signal(signal.SIGINT)
                try:
                    code = proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise KeyboardInterrupt from None
                if not junit_path.exists():
                    raise
                code = 1
        seconds = round(time.monotonic() - start, 1)
        if code == 5:
            raise RunError(f"no test matched (-k {k!r})")
        if not junit_path.exists() or code not in (0, 1):
            raise RunError(f"pytest ended with exit code {code} and no complete report:\n{_tail(log)}")
        meta = {
            "backend": backend,
            "suite": {"source": info.source, "commit": info.commit, "version": info.version, "files": paths},
            "triton_wheel": _version("triton"),
            "sdk": _version("triton-backend-sdk"),
            "workers": workers,
            "timeout_s": timeout,
            "sample": sample,
            "offset": offset,
            "ids_file": ids_file,
            "k": k,
            "seconds": seconds,
            "interrupted": interrupted,
        }
        hung = set(record.read_text().splitlines()) if record.exists() else set()
        return classify(junit_path, expectations, paths, meta, timed_out=hung)
    finally:
        if not work_dir:
            shutil.rmtree(root, ignore_errors=True)


def readme_table(report: Report) -> str:
    """The lines the README quotes for one run: counts, suite commit and version, wheel, manifest by reason."""
    m, t = report.meta, report.totals()
    suite = m.get("suite", {})
    sample = f", every {m['sample']}th test" if m.get("sample", 1) > 1 else ""
    if m.get("offset"):
        sample += f" from the {m['offset'] + 1}th"
    cats = ", ".join(f"{n} {c}" for c, n in sorted(report.manifest.by_category().items())) or "empty"
    counts = " | ".join(str(t[o]) for o in ("passed", "failed", "refused", "skipped", "crashed", "timeout"))
    about = (
        f"Suite {suite.get('commit', '?')[:9]} (version {suite.get('version')}){sample}, triton wheel "
        f"{m.get('triton_wheel')}; manifest {len(report.manifest.active())} entries ({cats})."
    )
    return "\n".join(
        [
            "| backend | passed | failed | refused (manifest) | skipped | crashed | timeout | minutes |",
            "|---|---|---|---|---|---|---|---|",
            f"| {m.get('backend')} | {counts} | {m.get('seconds', 0) / 60:.1f} |",
            "",
            about,
        ]
    )
