"""Stage this checkout as an installed `triton_backend_sdk` in a folder on PYTHONPATH, without pip.

The import package is assembled from `sdk/` and `backends/` as pyproject.toml's package-dir maps them; a dist-info
with the `triton.backends` entry point for opencl makes Triton discover the backend. The native extension
(`_native`: cpu_ref's launcher, and the launch contract every backend's launcher checks arguments with) is compiled
here with the machine's g++ against its Python and pybind11 headers, as setup.py would. cpu_ref is left
unregistered: the machine's Triton is older than the SDK supports for it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def build_native(root: Path, pkg: Path) -> None:
    """csrc/launcher.cpp -> pkg/_native<EXT_SUFFIX>, with setup.py's flags."""
    import pybind11

    out = pkg / ("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = ["g++", "-O3", "-pthread", "-shared", "-fPIC", "-std=c++17", "-fvisibility=hidden"]
    cmd += [f"-I{pybind11.get_include()}", f"-I{sysconfig.get_paths()['include']}"]
    cmd += [str(root / "csrc" / "launcher.cpp"), "-o", str(out)]
    subprocess.run(cmd, check=True)
    print(f"built {out}")


def main(root: str, site: str) -> None:
    src, dst = Path(root), Path(site)
    pkg = dst / "triton_backend_sdk"
    shutil.rmtree(pkg, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    shutil.copytree(src / "sdk", pkg, ignore=ignore)
    shutil.copytree(src / "backends", pkg / "backends", ignore=ignore)
    info = dst / "triton_backend_sdk-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: triton-backend-sdk\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[triton.backends]\nopencl = triton_backend_sdk.backends.opencl\n")
    (info / "top_level.txt").write_text("triton_backend_sdk\n")
    build_native(src, pkg)
    print(f"staged {pkg}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
