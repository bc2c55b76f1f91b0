#!/usr/bin/env bash
# What a new user waits for (issue 29, "the first build"): clones this repository at COMMIT
# (default HEAD) into a fresh folder and runs `bash scripts/demo.sh` there as a new user
# would, with nothing built and nothing cached, then prints
#   - the seconds to the demo's own first output (its "fixture API: …" line, the first it
#     prints after the build) and to its first byte on stdout (the books), and the total;
#   - a per-package breakdown of the clean debug build of `datasourced`: a second build in a
#     fresh scratch folder of the same clone, every compiler and linker job timed (wall and
#     CPU) and charged to the package its sources come from.
# Measurement on demand, never run by CI: one run is a few minutes of both cores.
#
#   scripts/first-run.sh [--work DIR] [--no-demo | --no-breakdown] [--keep] [COMMIT]
#
# Cold means: a `git clone` of this repository (no .build) and a HOME of its own, so SwiftPM's
# shared repository and manifest cache (~/.cache/org.swift.swiftpm, which ~/.swiftpm/cache
# points to), its fingerprints (~/.swiftpm/security) and clang's module cache
# (~/.cache/clang/ModuleCache, where the manifests' modules go) start empty. The dependencies still
# resolve as a new user's do: by URL through git, and on this machine git's system
# configuration (/etc/gitconfig, untouched by HOME) rewrites https://github.com/ to the
# mirrored packages. No Package.resolved is committed, so each run resolves the newest versions
# the mirrors hold. Python finds its packages as before (pyenv's shims name their own root).
# The clock starts at `bash scripts/demo.sh`; the clone is not counted (`git clone` of this
# repository is a second or two, once).
#
# Figures depend on the load: each run prints the load averages before, during and after it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

work="" demo=1 breakdown=1 keep=0 commit=HEAD
while [ $# -gt 0 ]; do
  case $1 in
    --work) work=$2; shift 2 ;;
    --no-breakdown) breakdown=0; shift ;;
    --no-demo) demo=0; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "first-run: unknown option $1 (expected --work DIR, --no-demo, --no-breakdown, --keep, or a commit)" >&2; exit 2 ;;
    *) commit=$1; shift ;;
  esac
done
sha="$(git -C "$root" rev-parse --verify "$commit^{commit}")" || {
  echo "first-run: $commit is not a commit of $root" >&2
  exit 2
}
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/first-run.XXXXXX")"
else
  [ ! -e "$work" ] || { echo "first-run: --work $work exists; give a folder that does not" >&2; exit 2; }
  mkdir -p "$work"
fi
# Kept with --keep, or when a step fails (its log is there).
trap '[ "$keep" = 1 ] || rm -rf "$work"' EXIT

toolchain_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
repo="$work/repo"
git clone --quiet --no-checkout "$root" "$repo"
git -C "$repo" checkout --quiet --detach "$sha"
mkdir -p "$work/home"
# The environment of a new user's shell: a HOME of its own, no daemon to reuse.
cold_env=(env -u DATASOURCED HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" XDG_CONFIG_HOME="$work/home/.config")

echo "first-run: $(git -C "$repo" log -1 --format='%h %s' | cut -c1-100)"
echo "first-run: work folder $work; $(nproc) cores; swift $(swift --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p')"

# The demo, timed from outside: its stdout and stderr are read as they come, each line stamped.
[ "$demo" = 0 ] || "${cold_env[@]}" python3 - "$repo" "$work/demo.log" <<'PY' || { keep=1; exit 1; }
import os, resource, selectors, subprocess, sys, threading, time

repo, log_path = sys.argv[1], sys.argv[2]
def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]
loads = [float(load()[0])]
done = threading.Event()
def sample():
    while not done.wait(10):
        loads.append(float(load()[0]))
threading.Thread(target=sample, daemon=True).start()

print("first-run: load average before the demo: " + " ".join(load()), flush=True)
start = time.monotonic()
demo = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=repo, stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
marks = {}
def mark(name):
    marks.setdefault(name, time.monotonic() - start)
selector = selectors.DefaultSelector()
selector.register(demo.stdout, selectors.EVENT_READ, "stdout")
selector.register(demo.stderr, selectors.EVENT_READ, "stderr")
pending = {"stdout": b"", "stderr": b""}
with open(log_path, "w") as log:
    def line_done(stream, line):
        now = time.monotonic() - start
        log.write(f"{now:8.2f} {stream} {line}\n")
        if stream == "stderr":
            # What SwiftPM says first once it has resolved and starts compiling, and when it
            # is done; then the demo's own first line (scripts/demo.sh: "fixture API: …").
            if line.startswith("Building for debugging"):
                mark("build_start")
            elif line.startswith("[") and "Compiling" in line:
                mark("build_start")
            elif line.startswith("Build of product") or line.startswith("Build complete"):
                mark("build_end")
            elif line.startswith("fixture API:"):
                mark("demo_first_line")
    while selector.get_map():
        for key, _ in selector.select():
            stream = key.data
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                if pending[stream]:
                    line_done(stream, pending[stream].decode(errors="replace"))
                continue
            if stream == "stdout":
                mark("first_stdout")
            *lines, pending[stream] = (pending[stream] + chunk).split(b"\n")
            for line in lines:
                line_done(stream, line.decode(errors="replace"))
status = demo.wait()
total = time.monotonic() - start
done.set()
cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
loads.append(float(load()[0]))
print("first-run: load average after the demo: " + " ".join(load())
      + f" (1-minute average every 10 s during it: {min(loads):.2f}–{max(loads):.2f})")
if status != 0:
    print(f"first-run: the demo failed (exit {status}); its output: {log_path}", file=sys.stderr)
    sys.exit(1)
def at(name):
    return f"{marks[name]:7.1f} s" if name in marks else "    (not seen)"
print(f"  setup.sh and package resolution, to the first compile   {at('build_start')}")
print(f"  build complete                                          {at('build_end')}")
print(f"  the demo's first output (its 'fixture API:' line)       {at('demo_first_line')}")
print(f"  the demo's first byte on stdout (the books)             {at('first_stdout')}")
print(f"  total                                                   {total:7.1f} s")
print(f"  CPU of the demo and everything it ran (user + system)   {cpu.ru_utime + cpu.ru_stime:7.1f} s")
print(f"RESULT first-run first_output_s={marks.get('demo_first_line', -1):.1f} "
      f"first_stdout_s={marks.get('first_stdout', -1):.1f} total_s={total:.1f} "
      f"cpu_s={cpu.ru_utime + cpu.ru_stime:.1f} load_min={min(loads):.2f} load_max={max(loads):.2f}")
PY

[ "$breakdown" = 1 ] || exit 0

# The breakdown: the same build again in an empty scratch folder (the packages are resolved
# by now, so this is compiling and linking alone), with the compiler (swift-frontend, through
# the driver's SWIFT_DRIVER_SWIFT_FRONTEND_EXEC), the C compiler (CC) and the linker driver
# (SWIFT_DRIVER_CLANG_EXEC) run through a wrapper that writes one line a job: its start and
# end, its CPU, and the sources it compiled. A wrapper is a bash fork and exec a job: a few
# milliseconds each, against seconds a job.
# The wrappers sit in a bin folder beside a link to the toolchain's lib, as the tools do: the
# driver finds its dependency scanner (lib_InternalSwiftScan) relative to the frontend.
timed="$work/timed-toolchain"
mkdir -p "$timed/bin"
ln -s "$(dirname "$toolchain_bin")/lib" "$timed/lib"
jobs_log="$work/jobs.tsv"
: >"$jobs_log"
for tool in swift-frontend clang; do
  cat >"$timed/bin/$tool" <<EOF
#!/usr/bin/env bash
real=$toolchain_bin/$tool
EOF
  cat >>"$timed/bin/$tool" <<'EOF'
# The driver passes long command lines in response files (@file, one argument a line).
arguments=()
for argument in "$@"; do
  if [[ $argument == @* && -f ${argument#@} ]]; then
    mapfile -t lines <"${argument#@}"
    for line in "${lines[@]}"; do
      line=${line#\"}
      arguments+=("${line%\"}")
    done
  else
    arguments+=("$argument")
  fi
done
module="" source="" output="" previous=""
for argument in "${arguments[@]}"; do
  case $previous in
    -module-name) module=$argument ;;
    -o) [ -n "$output" ] || output=$argument ;;
    # The driver names the sources in a file list when there are many; it may be gone after.
    -filelist | -primary-filelist) [ -n "$source" ] || IFS= read -r source <"$argument" || true ;;
  esac
  case $argument in
    *.swift | *.c | *.cc | *.cpp | *.S | *.s) [ -n "$source" ] || source=$argument ;;
  esac
  previous=$argument
done
start=$EPOCHREALTIME
status=0
"$real" "$@" || status=$?
end=$EPOCHREALTIME
# The job's CPU: this shell's reaped children's user and system time, in clock ticks (proc(5):
# cutime, cstime), read without a subshell (which `$(times)` would be, and report its own).
read -r -a stat <"/proc/$BASHPID/stat"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${real##*/}" "$start" "$end" "${stat[15]}" "${stat[16]}" \
  "$module" "$source" "$output" >>"$FIRST_RUN_JOBS"
exit $status
EOF
  chmod +x "$timed/bin/$tool"
done

# Resolving is the demo's part (or, without it, done here untimed): the breakdown is the build.
(cd "$repo" && "${cold_env[@]}" swift package resolve --scratch-path "$work/breakdown-build" >"$work/resolve.log" 2>&1) || {
  echo "first-run: resolving the packages failed; its output: $work/resolve.log" >&2
  keep=1
  exit 1
}
echo "first-run: load average before the breakdown build: $(cut -d' ' -f1-3 /proc/loadavg)"
build_start=$EPOCHREALTIME
(
  cd "$repo"
  "${cold_env[@]}" FIRST_RUN_JOBS="$jobs_log" \
    SWIFT_DRIVER_SWIFT_FRONTEND_EXEC="$timed/bin/swift-frontend" \
    SWIFT_DRIVER_CLANG_EXEC="$timed/bin/clang" CC="$timed/bin/clang" \
    swift build --product datasourced --scratch-path "$work/breakdown-build" >"$work/breakdown.log" 2>&1
) || {
  echo "first-run: the breakdown build failed; its output: $work/breakdown.log" >&2
  keep=1
  exit 1
}
build_end=$EPOCHREALTIME
echo "first-run: load average after the breakdown build: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$jobs_log" "$repo" "$build_start" "$build_end" <<'PY'
import collections, os, re, sys

jobs_path, repo, build_start, build_end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
def seconds(ticks):
    return int(ticks) / os.sysconf("SC_CLK_TCK")
def package_of(path):
    found = re.search(r"/checkouts/([^/]+)/", path)
    if found:
        return found.group(1)
    if path.startswith(repo + "/"):
        return "datasourced (this repository)"
    return None
def module_of(job):  # a job that names no module: its output, Modules/X.o or X.build/…
    found = re.search(r"/Modules/([^/]+)\.o$|/([^/]+)\.build/", job["output"])
    return (found.group(1) or found.group(2)) if found else job["module"]
jobs = []
for line in open(jobs_path):
    tool, start, end, user, system, module, source, output = line.rstrip("\n").split("\t")
    jobs.append(dict(tool=tool, start=float(start), end=float(end), cpu=seconds(user) + seconds(system),
                     module=module, source=source, output=output))
module_package = {}
for job in jobs:
    package = package_of(job["source"])
    if package and job["module"]:
        module_package.setdefault(job["module"], package)
def charged_to(job):
    if re.search(r"/Package(@swift-[0-9.]+)?\.swift$", job["source"]) or job["output"].endswith("-manifest"):
        return "package manifests (SwiftPM's planning)"
    if package_of(job["source"]):
        return package_of(job["source"])
    if module_of(job) in module_package:
        return module_package[module_of(job)]
    if not job["output"]:
        return "the driver's queries (target info, features)"
    if job["tool"] == "clang":
        return "linking"
    return "other: " + job["output"].rsplit("/", 1)[-1]
rows = collections.defaultdict(lambda: dict(jobs=0, cpu=0.0, first=float("inf"), last=0.0))
for job in jobs:
    row = rows[charged_to(job)]
    row["jobs"] += 1
    row["cpu"] += job["cpu"]
    row["first"] = min(row["first"], job["start"])
    row["last"] = max(row["last"], job["end"])
total_cpu = sum(row["cpu"] for row in rows.values()) or float("nan")
wall = build_end - build_start
print(f"\nThe clean debug build of `datasourced`, per package: {wall:.1f} s wall, {total_cpu:.1f} s of compiler and linker CPU")
print("| package | jobs | CPU s | share | first job → last job, s from the build's start |")
print("|---|---:|---:|---:|---|")
for package, row in sorted(rows.items(), key=lambda item: -item[1]["cpu"]):
    print(f"| {package} | {row['jobs']} | {row['cpu']:.1f} | {100 * row['cpu'] / total_cpu:.0f} % "
          f"| {row['first'] - build_start:.1f} → {row['last'] - build_start:.1f} |")
print(f"RESULT first-run-breakdown wall_s={wall:.1f} cpu_s={total_cpu:.1f} " +
      " ".join(f"{re.sub(r'[^A-Za-z0-9.-]+', '_', package.split(' (')[0])}={row['cpu']:.1f}" for package, row in sorted(rows.items())))
PY
