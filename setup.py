"""Builds the native launcher extension; all other metadata lives in pyproject.toml."""

from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup

setup(
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
