#!/usr/bin/env bash
# tests/setup-current-nvim.sh with a stand-in for python3 and pip (no network): a
# half-built venv is made again, a ready one is left alone, and two runs at once install
# once. Prints PASS/FAIL lines; exits non-zero if any check fails. Run by tests/run.sh.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
installs="$work/installs"
: >"$installs"

# The stand-in python3: `-m venv DIR` makes DIR/bin/python (this same script); `-m pip
# install PKG` (run as DIR/bin/python) counts the install, takes a moment, then puts a
# bin/nvim that runs; `-m pip freeze` prints nothing.
cat >"$work/python3" <<'PY'
#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0
fi
if [ "$1 $2 $3" = "-m pip install" ]; then
  echo install >>"$INSTALLS"
  sleep 0.5 # a slow install: the other run must wait for it, not use a half-made venv
  bin="$(dirname "$0")"
  printf '#!/bin/sh\necho "NVIM v0.11.4"\n' >"$bin/nvim" && chmod +x "$bin/nvim"
  exit 0
fi
exit 0
PY
chmod +x "$work/python3"

failed=0
check() { # name, then a command that must succeed
  local name="$1"; shift
  if "$@"; then echo "PASS setup-current-nvim: $name"; else echo "FAIL setup-current-nvim: $name"; failed=1; fi
}
setup() {
  INSTALLS="$installs" DATASOURCED_NVIM_PYTHON="$work/python3" DATASOURCED_NVIM_VENV="$work/venv" \
    bash "$here/setup-current-nvim.sh" 2>/dev/null
}

# A venv an interrupted install left: a python and an nvim, no marker.
mkdir -p "$work/venv/bin"
cp "$work/python3" "$work/venv/bin/python"
printf '#!/bin/sh\nexit 1\n' >"$work/venv/bin/nvim"
chmod +x "$work/venv/bin/nvim"
check "a half-built venv is installed again" test "$(setup)" = "$work/venv/bin/nvim"
check "... once" test "$(wc -l <"$installs")" -eq 1
check "... and its nvim runs" "$work/venv/bin/nvim" --version >/dev/null

check "a ready venv is used as it is" test "$(setup)" = "$work/venv/bin/nvim"
check "... with no install" test "$(wc -l <"$installs")" -eq 1

rm -rf "$work/venv"
: >"$installs"
setup >"$work/one" & first=$!
setup >"$work/two" & second=$!
wait "$first"; wait "$second"
check "two runs at once install once" test "$(wc -l <"$installs")" -eq 1
check "... and both get the nvim" test "$(cat "$work/one" "$work/two")" = "$work/venv/bin/nvim"$'\n'"$work/venv/bin/nvim"
exit "$failed"
