"""Builds the native launcher extension and ships the plugin ABI header; other metadata lives in pyproject.toml."""

import atexit
import os
import shutil
import tempfile

from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.egg_info import egg_info

HEADERS = os.path.join("csrc", "include", "triton_backend_sdk")


class BuildPyWithHeaders(build_py):
    """Copy csrc/include/triton_backend_sdk/*.h into the package (`triton_backend_sdk/include/...`), so that a
    wheel carries the native plugin ABI; `triton_backend_sdk.plugins.include_dir()` finds it there."""

    def run(self) -> None:
        super().run()
        dest = os.path.join(self.build_lib, "triton_backend_sdk", "include", "triton_backend_sdk")
        os.makedirs(dest, exist_ok=True)
        for name in os.listdir(HEADERS):
            if name.endswith(".h"):
                shutil.copy2(os.path.join(HEADERS, name), dest)


class EggInfoOutsideTheTree(egg_info):
    """pip's build backend asks for the build requirements by running `egg_info`, which writes
    `triton_backend_sdk.egg-info/` into the source tree unless told otherwise: metadata goes to a temporary directory
    instead (the wheel and the editable install carry their own)."""

    def finalize_options(self) -> None:
        if self.egg_base is None:
            self.egg_base = tempfile.mkdtemp(prefix="triton-backend-sdk-egg-info-")
            atexit.register(shutil.rmtree, self.egg_base, True)
        super().finalize_options()


setup(
    cmdclass={"build_py": BuildPyWithHeaders, "egg_info": EggInfoOutsideTheTree},
    ext_modules=[
        Pybind11Extension(
            "triton_backend_sdk._native",
            ["csrc/launcher.cpp"],
            cxx_std=17,
            extra_compile_args=["-O3", "-pthread"],
            extra_link_args=["-pthread"],
        )
    ],
)
