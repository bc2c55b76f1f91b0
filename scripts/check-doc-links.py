#!/usr/bin/env python3
"""Checks the links of the repository's Markdown files (every *.md git tracks): a link to a
file in the repository must name one that exists, and a link to an anchor (`(#anchor)`,
`(File.md#anchor)`) must name a heading of that file, as GitHub makes anchors of headings
(lower case, punctuation dropped, spaces made hyphens, `-1`, `-2`... for repeats), or an
explicit `<a name>`/`id`. Fenced code blocks and inline code are not read. Links that leave
the repository, and URLs with a scheme, are not checked. Prints each broken link as
FILE:LINE: and exits 1 when there is one."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"|\sid=\"([^\"]+)\"")


def prose_lines(text):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ " or c.isspace())
    return re.sub(r"\s", "-", text)


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            for name, ident in HTML_ANCHOR.findall(line):
                found.add(name or ident)
        cache[path] = found
    return cache[path]


def main():
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    broken = 0
    for name in files:
        source = ROOT / name
        if not source.exists():
            continue
        for number, line in prose_lines(source.read_text(encoding="utf-8")):
            line = re.sub(r"(`+).*?\1", "", line)  # inline code
            for target in LINK.findall(line):
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # https:, mailto:...
                path_part, _, anchor = target.partition("#")
                path = (source.parent / path_part).resolve() if path_part else source
                try:
                    path.relative_to(ROOT)
                except ValueError:
                    continue  # outside the repository
                problem = None
                if not path.exists():
                    problem = f"{path_part} does not exist"
                elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                    problem = f"{path.relative_to(ROOT)} has no heading whose anchor is #{anchor}"
                if problem:
                    broken += 1
                    print(f"{name}:{number}: ({target}): {problem}")
    if broken:
        print(f"{broken} broken link(s)")
        return 1
    print(f"links of {len(files)} Markdown files: all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
