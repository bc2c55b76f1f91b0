# Sourced by run.sh and capture.sh (with $here set to this folder): sets $plugin, $repo
# and an absolute, executable $DATASOURCED (given, else the repository's debug build),
# or exits saying how to get one. $1 names the script in messages.
plugin="$(cd "$here/.." && pwd)"
repo="$(cd "$plugin/../.." && pwd)"
DATASOURCED="${DATASOURCED:-$repo/.build/debug/datasourced}"
case "$DATASOURCED" in /*) ;; *) DATASOURCED="$PWD/$DATASOURCED" ;; esac
export DATASOURCED
[ -x "$DATASOURCED" ] || { echo "$1: no daemon at $DATASOURCED (build it, or set \$DATASOURCED)" >&2; exit 1; }
