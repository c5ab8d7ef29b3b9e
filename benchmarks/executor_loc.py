"""What an executor costs its author, in lines: the non-blank, non-comment lines of each executor's sources.

    python -m benchmarks.executor_loc                      # print the table for the working tree
    python -m benchmarks.executor_loc --rev 8ae476a        # the same for a commit (read through git)
    python -m benchmarks.executor_loc --before 8ae476a --write benchmarks/RESULTS-drivers.md

Issue 35 asks how much work an executor is; the answer is counted here, the same way for every language, so
that a "before" and an "after" are comparable. A line counts when it holds code once comments are removed:
``//`` and ``/* ... */`` comments in JavaScript, Java, Go and Rust; ``#`` comments and docstrings in Python.
Each executor's source set is what its author writes (:data:`EXECUTORS`); the vocabulary file the executors
share (``harness/core/vocabulary.json``) is data, counted in a row of its own. Build scripts,
lock files and reproductions are not counted.

``--write PAGE`` puts the before/after table in the section ``## Executor size`` of PAGE, between markers
of its own, below the notes that ``bench_drivers.py`` keeps, so either script may rewrite the page.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Each executor's sources: glob patterns relative to the repository root (``**`` crosses folders).
EXECUTORS: dict[str, tuple[str, ...]] = {
    "node": ("harness/drivers/node/executor.js", "harness/drivers/node/lib/*.js"),
    "java": ("harness/drivers/java/src/main/java/**/*.java",),
    "go": ("harness/drivers/go/*.go",),
    "rust": ("harness/drivers/rust/src/*.rs", "harness/drivers/rust/build.rs"),
    "reference (pymongo)": ("harness/drivers/executor/pymongo_reference.py",),
}
VOCABULARY = "harness/core/vocabulary.json"
SECTION_START = "<!-- executor-size: written by benchmarks/executor_loc.py -->"
SECTION_END = "<!-- /executor-size -->"

_C_COMMENTS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def _strip_c_comments(text: str) -> str:
    """The text without ``//`` and ``/* */`` comments (string literals are kept whole, so ``"//"`` stays)."""

    def keep(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("/"):
            return "\n" * token.count("\n")
        return token

    return _C_COMMENTS.sub(keep, text)


def c_like_lines(text: str) -> int:
    """Lines holding code in a C-like language (JavaScript, Java, Go, Rust)."""
    return sum(1 for line in _strip_c_comments(text).splitlines() if line.strip())


def python_lines(text: str) -> int:
    """Lines holding code in Python: comments and docstrings (a string standing as a statement) are not code."""
    code_lines: set[int] = set()
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = token.type
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            if kind in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                previous = kind
            continue
        if kind == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = kind  # a docstring, or a string standing alone: not code
            continue
        previous = kind
        code_lines.update(range(token.start[0], token.end[0] + 1))
    return len(code_lines)


def json_lines(text: str) -> int:
    """Lines of a data file that hold anything."""
    return sum(1 for line in text.splitlines() if line.strip())


COUNTERS: dict[str, Callable[[str], int]] = {
    ".py": python_lines,
    ".js": c_like_lines,
    ".java": c_like_lines,
    ".go": c_like_lines,
    ".rs": c_like_lines,
    ".json": json_lines,
}


class Tree:
    """The files of the repository as they are in the working tree, or at a commit (read through git)."""

    def __init__(self, rev: str | None) -> None:
        self.rev = rev
        listing = ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev] if rev else None
        if listing is None:
            tracked = subprocess.run(
                ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.splitlines()
            self.paths = sorted(p for p in tracked if (ROOT / p).is_file())
        else:
            self.paths = subprocess.run(listing, check=True, capture_output=True, text=True).stdout.splitlines()

    def read(self, path: str) -> str:
        if self.rev is None:
            return (ROOT / path).read_text()
        return subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{self.rev}:{path}"], check=True, capture_output=True, text=True
        ).stdout

    def matching(self, patterns: tuple[str, ...]) -> list[str]:
        def matches(path: str, pattern: str) -> bool:
            if "**" in pattern:
                head, tail = pattern.split("**", 1)
                return path.startswith(head) and fnmatch.fnmatch(path.rsplit("/", 1)[-1], tail.lstrip("/"))
            return fnmatch.fnmatch(path, pattern) and path.count("/") == pattern.count("/")

        return [p for p in self.paths if any(matches(p, pattern) for pattern in patterns)]


def count(tree: Tree) -> dict[str, tuple[int, int]]:
    """Executor name -> (files, lines of code); the vocabulary file too, when the tree has one."""
    counts: dict[str, tuple[int, int]] = {}
    for name, patterns in EXECUTORS.items():
        files = tree.matching(patterns)
        lines = sum(COUNTERS[Path(p).suffix](tree.read(p)) for p in files)
        counts[name] = (len(files), lines)
    if VOCABULARY in tree.paths:
        counts["vocabulary.json (shared)"] = (1, json_lines(tree.read(VOCABULARY)))
    return counts


def table(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]], before_rev: str) -> str:
    rows = [
        f"| executor | files before | lines before ({before_rev}) | files after | lines after | change |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in list(dict.fromkeys([*before, *after])):
        files_before, lines_before = before.get(name, (0, 0))
        files_after, lines_after = after.get(name, (0, 0))
        change = f"{(lines_after - lines_before) / lines_before:+.0%}" if lines_before else "new"
        rows.append(f"| {name} | {files_before} | {lines_before} | {files_after} | {lines_after} | {change} |")
    return "\n".join(rows)


def section(body: str, before_rev: str) -> str:
    return "\n".join(
        [
            SECTION_START,
            "## Executor size",
            "",
            (
                "Non-blank, non-comment lines of each executor's own sources (`python -m benchmarks.executor_loc "
                f"--before {before_rev}`; the source sets and the counting rule are in the script). *Before* is the "
                "commit before the shared vocabulary file (issue 34, item 5); *after* is the working tree it was "
                "written from."
            ),
            "",
            body,
            SECTION_END,
        ]
    )


def write(page: Path, text: str) -> None:
    current = page.read_text() if page.exists() else ""
    start, end = current.find(SECTION_START), current.find(SECTION_END)
    if start >= 0 and end > start:
        current = current[:start] + text + current[end + len(SECTION_END) :]
    else:
        current = current.rstrip("\n") + "\n\n" + text + "\n"
    page.write_text(current)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", help="count a commit instead of the working tree")
    parser.add_argument("--before", help="a commit to compare with: prints (or writes) a before/after table")
    parser.add_argument("--write", type=Path, help="the page to put the before/after table in")
    args = parser.parse_args(argv)
    now = count(Tree(args.rev))
    if args.before is None:
        for name, (files, lines) in now.items():
            print(f"{name}: {lines} lines in {files} files")
        return 0
    text = table(count(Tree(args.before)), now, args.before)
    if args.write:
        write(args.write, section(text, args.before))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
