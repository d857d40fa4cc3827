"""Stage this checkout as an installed `triton_backend_sdk` in a folder on PYTHONPATH, without building anything.

The import package is assembled from `sdk/` and `backends/` as pyproject.toml's package-dir maps them; a dist-info
with the `triton.backends` entry point for opencl makes Triton discover the backend. cpu_ref is left unregistered:
its launcher is a compiled extension built for another Python here.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


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
    print(f"staged {pkg}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
