#!/usr/bin/env bash
# Download, on a machine with network, the cp312 wheels tools/gpu/run_opencl_h200.sh installs on the H200 machine
# (which has no network) into .whl/ (ignored by git: carry it with the device tool, carry=[".whl"]).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .whl
grep -qs '^/.whl/$' .gitignore || { mkdir -p .git/info && echo /.whl/ >> .git/info/exclude; }
PLAT=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
# pyopencl and its run-time deps (METADATA Requires-Dist), numpy in case the machine lacks it, pytest (+ xdist) for the tests
for req in pyopencl==2026.1.4 "pytools>=2025.1.6" "platformdirs>=2.2" "typing_extensions>=4.6" siphash24 numpy \
           pytest pluggy iniconfig packaging pygments pytest-xdist execnet; do
  python3 -m pip download --no-deps "${PLAT[@]}" -d .whl "$req"
done
ls -la .whl
