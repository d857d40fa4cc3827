"""A throwaway venv with one example package installed (pip, no index, no deps) that sees this environment's
packages through a `.pth`, so that a broken example can never break `import triton` here; and a runner for it."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import venv
from pathlib import Path


def example_python(env_dir: Path, example: str) -> str:
    """The venv's python, with the example at `example` installed from a copy (setuptools writes build/ and
    *.egg-info next to the sources)."""
    src = env_dir / "src"
    shutil.copytree(example, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    # `system_site_packages` would name the base interpreter's packages, not this (virtual) environment's: pip,
    # setuptools (>= 70.1 has bdist_wheel: the dev extra pins it), torch, triton and the SDK come from here instead.
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(purelib, "parent-environment.pth"), "w") as f:
        # addsitedir, not bare paths: the editable install of the SDK is itself a .pth there
        f.write("".join(f"import site; site.addsitedir({d!r})\n" for d in site.getsitepackages()))
    r = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation", str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, f"pip install of {example} failed:\n{r.stdout}\n{r.stderr}"
    return python


def run(python: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ, **env)
    return subprocess.run(
        [python, *args], env=e, capture_output=True, text=True, timeout=900, check=False, cwd=os.path.dirname(python)
    )
