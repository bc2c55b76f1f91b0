# Sourced by the editors' tests/run.sh (Clients/nvim, Clients/vim, Clients/emacs): their
# tests/timing.sh run as one test. The screens must come (timing.sh's exit status 0 or 3:
# PASS); its figures are printed and said to be within their floors (0) or not (3), never
# a failure: speed targets are benchmarks, and a loaded machine is no bug.
# Prints PASS or FAIL, then timing.sh's output indented; returns 1 on FAIL.
#   run_timing CHECK FLOORS COMMAND...
run_timing() {
  local check="$1" floors="$2" log status=0
  shift 2
  log="$(mktemp)"
  "$@" >"$log" 2>&1 || status=$?
  case "$status" in
    0 | 3)
      echo "PASS $check"
      if [ "$status" = 0 ]; then
        echo "  figures within their floors: $floors"
      else
        echo "  figures OUTSIDE their floors (not a failure): $floors"
      fi
      ;;
    *) echo "FAIL $check" ;;
  esac
  sed 's/^/  /' "$log"
  rm -f "$log"
  [ "$status" = 0 ] || [ "$status" = 3 ]
}
