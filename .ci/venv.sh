#!/usr/bin/env bash
# Makes a Python virtual environment with pinned packages from PyPI, once (the CI scripts share it).
# Usage: .ci/venv.sh <folder> <import to check> <package==version>…
set -euo pipefail
venv=$1 module=$2
shift 2
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import $module" 2> /dev/null; then exit 0; fi
# CPython 3.11 fails inside Hypothesis ("AST constructor recursion depth mismatch", a CPython bug fixed in later
# versions) on Schemathesis's large modules: take the newest Python there is.
python=python3
for candidate in python3.13 python3.12 "$HOME/.pyenv/versions/3.13.0/bin/python3" "$HOME/.pyenv/versions/3.12.1/bin/python3"; do
    if "$candidate" -c "import venv" > /dev/null 2>&1; then python=$candidate; break; fi
done
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
