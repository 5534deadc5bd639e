#!/usr/bin/env bash
# The Python judges of the cloud half (cfn-lint, moto's server) in a venv of their own under the git-ignored
# cache, installed from the committed lock (tools/aws-judges/python/requirements.lock). Idempotent: nothing is
# done while the venv's stamp is newer than the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.cache/py-judges
lock=tools/aws-judges/python/requirements.lock
stamp="$venv/.installed"
if [ -f "$stamp" ] && [ "$stamp" -nt "$lock" ]; then exit 0; fi
python=$(command -v python3 || true)
if [ -z "$python" ]; then
  echo "python-judges: python3 (>= 3.9, with venv) is missing; install it with: apt-get install -y python3 python3-venv" >&2
  exit 1
fi
echo "python-judges: installing cfn-lint and moto into $venv (pip, from $lock)" >&2
rm -rf "$venv"
if ! "$python" -m venv "$venv" >&2; then
  echo "python-judges: '$python -m venv' failed; install the venv module (apt-get install -y python3-venv) and run npm test again" >&2
  exit 1
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$lock" >&2
touch "$stamp"
