"""Memory-safety runs over the native launcher and a slice of the op suite: AddressSanitizer + UBSan, then valgrind.

    .venv/bin/python tools/sanitize.py [--asan] [--valgrind] [--out DIR]

ASan/UBSan: the launcher (csrc/launcher.cpp) is rebuilt with `-fsanitize=address,undefined` into DIR, a
`sitecustomize` there makes that build `triton_backend_sdk._native` before anything imports the package, and
libasan is preloaded (the interpreter itself is not instrumented; leaks are not checked, Python keeps objects alive
on purpose). The JIT-compiled kernels are not instrumented either: their out-of-bounds accesses are what the
guard-page tests catch. Valgrind (memcheck, PYTHONMALLOC=malloc) runs the same tests on the stock build; it sees
kernel code too; its errors are split into those with a frame in the launcher or in JIT-compiled kernel code (the
SDK's, which fail the run) and the rest (CPython, the loader, torch: there is no suppression file for them here).

Each run's log lands in DIR; the summary says how many errors each tool reported, with the first ones. Exit status 1
when a tool reported an error.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: what runs under each tool: the launcher's own tests, the contract on every backend, first launches from threads,
#: asserts, and an op-suite slice of cpu_ref (every case family at its first dtype and shape)
TESTS = [
    "tests/test_launcher.py",
    "tests/test_launch_contract.py",
    "tests/test_concurrency_first_launch.py",
    "tests/test_op_suite_debug.py",
]
OP_SLICE = "cpu_ref and (float32 or int32) and not 2x"
VALGRIND_TESTS = ["tests/test_launcher.py", "tests/test_launch_contract.py"]
#: a forked child inherits memcheck's error count (the fork test's child then exits with it): left out
VALGRIND_K = "not test_fork_after_pool_creation and (not test_op_suite or (cpu_ref and float32-1000))"

SITECUSTOMIZE = '''"""Load the sanitizer build of triton_backend_sdk._native (tools/sanitize.py)."""
import importlib.machinery, importlib.util, sys

_path = {path!r}
_loader = importlib.machinery.ExtensionFileLoader("triton_backend_sdk._native", _path)
_spec = importlib.util.spec_from_file_location("triton_backend_sdk._native", _path, loader=_loader)


class _Finder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        return _spec if name == "triton_backend_sdk._native" else None


sys.meta_path.insert(0, _Finder)
'''


def _preload() -> str:
    """libasan first, then libstdc++: the interpreter does not link libstdc++, and ASan must find the real
    __cxa_throw when it starts (else its interceptor fails its CHECK at the launcher's first C++ throw)."""
    libs = [
        subprocess.run(["g++", f"-print-file-name={n}"], capture_output=True, text=True, check=True).stdout.strip()
        for n in ("libasan.so", "libstdc++.so.6")
    ]
    return " ".join(libs)


def build_asan(out: Path) -> Path:
    """The launcher built with ASan + UBSan, and a sitecustomize that loads it; returns the sitecustomize's dir."""
    import pybind11

    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    so = out / f"_native_asan{suffix}"
    cmd = [
        "g++",
        "-O1",
        "-g",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        "-fvisibility=hidden",
        "-std=c++17",
        "-shared",
        "-fPIC",
        "-pthread",
        f"-I{pybind11.get_include()}",
        f"-I{sysconfig.get_paths()['include']}",
        str(ROOT / "csrc" / "launcher.cpp"),
        "-o",
        str(so),
    ]
    subprocess.run(cmd, check=True)
    site = out / "asan_site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(path=str(so)))
    return site


def _pytest(tests: list[str], k: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *tests]
    return cmd + (["-k", k] if k else [])


def _results(log: Path) -> str:
    """pytest's summary lines in a log ("N passed, M skipped in T s"), joined."""
    lines = [
        ln.strip("= ") for ln in log.read_text(errors="replace").splitlines() if re.search(r"\d+ (passed|failed)", ln)
    ]
    return "; ".join(lines) or "(no pytest summary)"


def run_asan(out: Path) -> tuple[int, str]:
    site = build_asan(out)
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")])),
            "LD_PRELOAD": _preload(),
            "ASAN_OPTIONS": "detect_leaks=0:use_sigaltstack=0:halt_on_error=1:log_path=" + str(out / "asan"),
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:log_path=" + str(out / "ubsan"),
            "TRITON_CACHE_DIR": str(out / "cache-asan"),
        }
    )
    log = out / "asan.log"
    check = "import triton_backend_sdk._native as n; print(n.__file__)"
    loaded = subprocess.run(
        [sys.executable, "-c", check], check=False, env=env, capture_output=True, text=True
    ).stdout.strip()
    if "_native_asan" not in loaded:
        return 1, f"asan: the sanitizer build was not the one imported ({loaded!r})"
    rc = 0
    with log.open("w") as f:
        for tests, k in ((TESTS, None), (["tests/test_op_suite.py"], OP_SLICE)):
            rc |= subprocess.run(
                _pytest(tests, k), check=False, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT
            ).returncode
    reports = sorted(out.glob("asan.*")) + sorted(out.glob("ubsan.*"))
    errors = [p for p in reports if p.suffix != ".log" and p.stat().st_size]
    summary = f"asan+ubsan: {len(errors)} report file(s); pytest: {_results(log)} (exit {rc}); log {log}"
    for p in errors[:3]:
        summary += "\n  " + p.read_text()[:1500].replace("\n", "\n  ")
    return (1 if errors or rc else 0), summary


_ERROR_START = re.compile(
    r"^==\d+== (Invalid|Conditional jump|Use of uninitialised|Syscall param|Mismatched|Source and)"
)
#: frames of SDK code: the launcher, and JIT-compiled kernels (no object file: valgrind prints ???)
_OURS = re.compile(r"launcher\.cpp|_native|tbs::|: \?\?\?$", re.MULTILINE)


def _error_blocks(text: str) -> list[str]:
    """Each memcheck error report (its first line and its frames) of one log."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _ERROR_START.match(line):
            blocks.append([line])
        elif blocks and re.match(r"^==\d+==    (at|by) ", line) and len(blocks[-1]) < 40:
            blocks[-1].append(line)
    return ["\n".join(b) for b in blocks]


def _is_ours(block: str) -> bool:
    frames = block.splitlines()[1:]
    return any(_OURS.search(f) for f in frames[:12])


def _top_object(block: str) -> str:
    """Where an error that is not the SDK's happened: the source file or object of its first frame."""
    frames = block.splitlines()[1:]
    if not frames:
        return "?"
    m = re.search(r"\((?:in )?([^():]+)", frames[0])
    return os.path.basename(m.group(1)) if m else frames[0].split(":")[-1].strip()


def run_valgrind(out: Path) -> tuple[int, str]:
    log = out / "valgrind.log"
    vlog = out / "valgrind.%p.txt"
    env = dict(os.environ, PYTHONMALLOC="malloc", TRITON_CACHE_DIR=str(out / "cache-valgrind"))
    cmd = [
        "valgrind",
        "--tool=memcheck",
        "--trace-children=no",
        "--leak-check=no",
        "--track-origins=no",
        f"--log-file={vlog}",
        *_pytest(VALGRIND_TESTS + ["tests/test_op_suite.py"], VALGRIND_K),
    ]
    with log.open("w") as f:
        rc = subprocess.run(cmd, check=False, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    ours: list[str] = []
    others: dict[str, int] = {}
    for p in sorted(out.glob("valgrind.*.txt")):
        for block in _error_blocks(p.read_text(errors="replace")):
            if _is_ours(block):
                ours.append(block)
            else:
                top = _top_object(block)
                others[top] = others.get(top, 0) + 1
    elsewhere = ", ".join(f"{n} in {o}" for o, n in sorted(others.items(), key=lambda kv: -kv[1])[:6]) or "none"
    summary = (
        f"valgrind memcheck: {len(ours)} error(s) in the launcher or kernel code; elsewhere (interpreter, loader, "
        f"libraries): {elsewhere}; pytest: {_results(log)} (exit {rc}); logs {out}/valgrind.*.txt"
    )
    for block in ours[:3]:
        summary += "\n  " + block.replace("\n", "\n  ")
    return (1 if ours or rc else 0), summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asan", action="store_true", help="run AddressSanitizer + UBSan (default: both tools)")
    ap.add_argument("--valgrind", action="store_true", help="run valgrind memcheck (default: both tools)")
    ap.add_argument("--out", type=Path, default=None, help="directory for builds and logs (default: a temp dir)")
    args = ap.parse_args(argv)
    tools = [t for t, on in (("asan", args.asan), ("valgrind", args.valgrind)) if on] or ["asan", "valgrind"]
    out = args.out or Path(tempfile.mkdtemp(prefix="tbs-sanitize-"))
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for tool in tools:
        rc, summary = (run_asan if tool == "asan" else run_valgrind)(out)
        print(summary, flush=True)
        status |= rc
    return status


if __name__ == "__main__":
    sys.exit(main())
