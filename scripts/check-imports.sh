#!/usr/bin/env bash
# Fails when a Swift file imports a module its module may not import. The rules are the
# table under "## Rules" in ARCHITECTURE.md (one row a module: its folder and the modules it
# may import); the platform's modules (Glibc, Musl, Dispatch, Synchronization) are allowed
# everywhere. A folder with Swift files and no row fails too, so a new module gets its rule.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - <<'PYTHON'
import pathlib, re, sys

always = {"Glibc", "Musl", "Dispatch", "Synchronization"}
text = pathlib.Path("ARCHITECTURE.md").read_text()
start = text.index("<!-- check-imports: the table below")
end = text.index("<!-- check-imports: end of the table")
rules = {}
for line in text[start:end].splitlines():
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if len(cells) != 4 or not cells[1].startswith("`"):
        continue
    folder = cells[1].strip("`")
    rules[folder] = (cells[0].strip("`"), set(re.findall(r"`([^`]+)`", cells[3])) | always)

# `import X`, `@testable import X`, `public import X`, `import struct X.Y`...
pattern = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?"
                     r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][A-Za-z0-9_]*)")
problems = []
folders = set()
for root in ("Sources", "Tests", "Benchmarks/Sources", "Fuzz"):
    for path in sorted(pathlib.Path(root).rglob("*.swift")) if pathlib.Path(root).is_dir() else []:
        folder = next((f for f in rules if path.as_posix().startswith(f + "/")), None)
        if folder is None:
            top = "/".join(path.parts[:3] if root == "Benchmarks/Sources" else path.parts[:2])
            if top not in folders:
                problems.append(f"{top}: no row in ARCHITECTURE.md's rules for this folder")
                folders.add(top)
            continue
        module, allowed = rules[folder]
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = pattern.match(line)
            if match and match.group(1) not in allowed:
                problems.append(f"{path}:{number}: {module} may not import {match.group(1)} "
                                f"(ARCHITECTURE.md, its row under \"Rules\")")
for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check-imports: every import within its module's rule ({len(rules)} modules)")
PYTHON
