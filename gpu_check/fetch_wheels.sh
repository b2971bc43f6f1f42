#!/usr/bin/env bash
# Download, on a machine with network access, the wheels that run.sh needs on an offline GPU
# machine whose Python already has NumPy, CuPy, pytest and hypothesis: the notebook stack the
# test suite imports (IPython, ipywidgets, ipykernel, nbclient, nbformat and their needs).
# They land in gpu_check/wheels/ (git-ignored, about 20 MB); copy that folder along with the
# working tree and run.sh installs them with --no-index.
#
#   PYTHON_VERSION=3.12 bash gpu_check/fetch_wheels.sh   # the GPU machine's Python version
#   (PYTHON=... names the interpreter whose pip downloads)
set -euo pipefail
cd "$(dirname "$0")"
version="${PYTHON_VERSION:-3.12}"
rm -rf wheels
"${PYTHON:-python3}" -m pip download --quiet --only-binary=:all: --dest wheels \
  --python-version "$version" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 --platform any \
  "ipython>=8.12" "ipywidgets>=8" "ipykernel>=6.25" "nbclient>=0.10" "nbformat>=5.9"
echo "fetch_wheels: $(ls wheels | wc -l) wheels, $(du -sh wheels | cut -f1), in gpu_check/wheels"
