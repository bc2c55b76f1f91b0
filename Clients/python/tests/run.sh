#!/usr/bin/env bash
# The Python client's checks, as CI runs them (scripts/test.sh): installs the pinned tools
# (requirements.txt) and the package itself (pip install Clients/python: a wheel, nothing
# left in the tree), type-checks the package and the examples with mypy --strict, then runs
# pytest against the real daemon: $DATASOURCED, else the repository's debug build.
# Idempotent; exits with mypy's status if it fails, else with pytest's.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
repo="$(cd ../.. && pwd)"
export DATASOURCED="${DATASOURCED:-$repo/.build/debug/datasourced}"

pip=(python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore)
missing=$(python3 - <<'PY'
from importlib import metadata
for line in open("requirements.txt"):
    name, _, version = line.split("#")[0].strip().partition("==")
    if name:
        try:
            if metadata.version(name) != version:
                print(name)
        except metadata.PackageNotFoundError:
            print(name)
PY
)
if [ -n "$missing" ]; then
  echo "run.sh: installing requirements.txt (${missing//$'\n'/ })" >&2
  "${pip[@]}" -r requirements.txt
fi
# Reinstalled each time (a few seconds): the tests check what the installed copy holds.
"${pip[@]}" --no-deps --force-reinstall .

echo "== mypy --strict (the package and the examples)"
python3 -m mypy --strict --cache-dir "${TMPDIR:-/tmp}/datasourced-client-mypy" datasourced_client examples
echo "== pytest"
exec python3 -m pytest -q
