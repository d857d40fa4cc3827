"""Copy Triton's upstream tests out of a source checkout or a bare git dir into a directory pytest can run.

The staged tree keeps upstream's layout under ``python/`` (``conftest.py`` with the ``device`` fixture and
``--device`` option, ``test/conftest.py``, the test files and their sibling helper modules such as
``test_core.py`` that ``test_standard.py`` imports), so test ids read as upstream's own.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

LANGUAGE_DIR = "python/test/unit/language"
DEFAULT_FILES = ("test_core.py", "test_standard.py", "test_random.py")
CONFTESTS = ("python/conftest.py", "python/test/conftest.py")
# Written beside the staged conftest so that no project's own pytest configuration above the temp dir applies.
PYTEST_INI = "[pytest]\nmarkers =\n    interpreter: runs under Triton's interpreter too (upstream marker)\n"


class StagingError(RuntimeError):
    """The Triton source could not be read or lacks a requested file."""


@dataclass(frozen=True)
class SuiteInfo:
    """Where the staged tests came from: shown next to the installed wheel's version, since they may differ."""

    source: str
    commit: str
    version: str


def repo_path(name: str) -> str:
    """A --files entry: a bare name is in upstream's language test dir; a name with '/' is repository-relative."""
    return name if "/" in name else f"{LANGUAGE_DIR}/{name}"


def _git(git_dir: Path, *args: str) -> bytes:
    try:
        return subprocess.run(
            ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, timeout=120
        ).stdout
    except subprocess.CalledProcessError as e:
        raise StagingError(f"git {' '.join(args)} in {git_dir} failed: {e.stderr.decode().strip()}") from None


def _is_bare_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / "python").is_dir()


def _version_of(init_text: str) -> str:
    m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", init_text, re.MULTILINE)
    return m.group(1) if m else "unknown"


class _Source:
    """Read access to one Triton tree: a checkout on disk or a git dir at a revision."""

    def __init__(self, triton_src: Path, rev: str | None):
        self.root = triton_src
        self.git_dir = triton_src if _is_bare_git_dir(triton_src) else None
        if self.git_dir is None and not (triton_src / "python").is_dir():
            raise StagingError(f"{triton_src} is neither a Triton checkout (no python/ dir) nor a git dir")
        if self.git_dir is None and rev is not None:
            raise StagingError("--rev applies to a git dir only; check the revision out in the source tree instead")
        self.rev = rev or "HEAD"

    def commit(self) -> str:
        if self.git_dir is not None:
            return _git(self.git_dir, "rev-parse", f"{self.rev}^{{commit}}").decode().strip()
        dot_git = self.root / ".git"
        if not dot_git.exists():
            return "unknown (not a git checkout)"
        return _git(dot_git, "rev-parse", "HEAD").decode().strip()

    def read(self, path: str) -> bytes:
        if self.git_dir is not None:
            return _git(self.git_dir, "show", f"{self.rev}:{path}")
        file = self.root / path
        if not file.is_file():
            raise StagingError(f"{file} does not exist")
        return file.read_bytes()

    def exists(self, path: str) -> bool:
        if self.git_dir is not None:
            args = ["git", "--git-dir", str(self.git_dir), "cat-file", "-e", f"{self.rev}:{path}"]
            return subprocess.run(args, check=False, capture_output=True, timeout=120).returncode == 0
        return (self.root / path).is_file()

    def python_files_in(self, directory: str) -> list[str]:
        if self.git_dir is not None:
            names = _git(self.git_dir, "ls-tree", "--name-only", f"{self.rev}:{directory}").decode().split()
        else:
            names = [p.name for p in (self.root / directory).iterdir()]
        return sorted(f"{directory}/{n}" for n in names if n.endswith(".py"))


def stage(triton_src: str | Path, dest: str | Path, files: tuple[str, ...] = DEFAULT_FILES, rev: str | None = None):
    """Stage ``files`` (and every .py beside them, for their imports) under ``dest``.

    Returns ``(python_dir, test_paths, info)``: the directory to run pytest in, the test files relative to it,
    and where the suite came from.
    """
    src = _Source(Path(triton_src), rev)
    dest = Path(dest)
    wanted = [repo_path(f) for f in files]
    # Which conftest holds the ``device`` fixture moved between releases (python/ or python/test/): take both.
    to_copy = {path for path in CONFTESTS if src.exists(path)}
    for path in wanted:
        if not path.startswith("python/"):
            raise StagingError(f"{path}: upstream tests live under python/")
        to_copy.update(src.python_files_in(path.rsplit("/", 1)[0]))
        to_copy.add(path)
    for path in sorted(to_copy):
        out = dest / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(src.read(path))
    (dest / "python" / "pytest.ini").write_text(PYTEST_INI)
    init = "python/triton/__init__.py"
    version = _version_of(src.read(init).decode()) if src.exists(init) else "unknown"
    info = SuiteInfo(source=str(triton_src) + (f"@{rev}" if rev else ""), commit=src.commit(), version=version)
    return dest / "python", [p.removeprefix("python/") for p in wanted], info
