#!/usr/bin/env bash
# Installs the test material that comes from PyPI (never linked by the
# compiler): the `onnx` package, for its backend node tests at opsets up to
# 27 and for checking frontends/onnx/OnnxSchemas.inc against its schema
# registry. Pinned: onnx 1.22.0 is the newest release whose wheel still ships
# the node test data. Idempotent; the virtual environment lives in
# .cache/onnx-testdata (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${REMAT_TESTDATA_VENV:-.cache/onnx-testdata}
ONNX_VERSION=1.22.0
if [ -x "$VENV/bin/python" ] &&
   "$VENV/bin/python" -c "import onnx, sys; sys.exit(onnx.__version__ != '$ONNX_VERSION')" 2>/dev/null; then
  echo "install-test-data: onnx $ONNX_VERSION present in $VENV"
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: \
  "onnx==$ONNX_VERSION"
echo "install-test-data: onnx $ONNX_VERSION installed in $VENV"
