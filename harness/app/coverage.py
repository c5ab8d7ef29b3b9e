"""``harness coverage``: every MUST and SHOULD of the change-streams spec, and the tests that check it.

The spec text is read from the path the user gives (``--spec-text``: a file, a
folder of a specifications checkout, or a ``git:URL@COMMIT[#PATH]`` source, as
``--specs`` takes); in a checkout, by default, the team's
``../shared/specs/reference/change-streams.md`` beside it. With no text at hand
(an installed wheel, or no shared folder) the rules and what checks them are
still listed, and the output says the text was not compared.
The tests are the project's own (its supplementary scenarios and the prose
tests, which ship with it and always count) and those the ``spec`` suite loads
from ``--specs`` (by default, in a checkout, the shared upstream legacy and
unified folders beside it, when present). Exit status: 0 when every rule a run
can observe is checked and its check proven by a breakage, and every sentence
of the reference texts is accounted for (or ``--report-only``), 1 when not, 2
when the inputs cannot be read.

``--write-combinations`` writes the checks generated across the dimension table instead
(:mod:`harness.app.combinations_files`) and exits.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.app.combinations import DimensionTable
from harness.app.coverage_map import CoverageMap, LoadedTest, as_json, build_map, split_anchor
from harness.app.coverage_render import RENDERERS
from harness.core.project_data import project_data, shared_specs
from harness.formats.rule_files import Catalogue

SHARED_SPECS = shared_specs()
DEFAULT_SPEC_TEXT = SHARED_SPECS / "reference" / "change-streams.md" if SHARED_SPECS is not None else None
SUPPLEMENTARY = project_data("scenarios", "supplementary")
#: Where a spec text may sit inside a folder the user names (a checkout, its change-streams folder, its tests).
SPEC_TEXT_PLACES = (
    "change-streams.md",
    "source/change-streams/change-streams.md",
    "checkout/source/change-streams/change-streams.md",
    "../change-streams.md",
)


#: The suites whose tests count: spec files, the prose tests and the code-defined checks (the last two ship with the
#: harness).
COUNTED_SUITES = ("spec", "prose", "checks")


class CoverageInputError(Exception):
    """An input ``harness coverage`` cannot read; the message says which and what to give instead."""


def add_coverage_arguments(parser: argparse.ArgumentParser) -> None:
    default_text = DEFAULT_SPEC_TEXT or "none; the rules are listed and the text is not compared"
    parser.add_argument(
        "--spec-text",
        default=None,
        metavar="PATH",
        help="the change-streams spec's markdown: a file, a specifications checkout, or "
        f"git:URL@COMMIT[#PATH] (default: {default_text})",
    )
    parser.add_argument(
        "--specs",
        action="append",
        default=[],
        metavar="PATH",
        help="spec files or folders (or sources, as for run) whose tests count besides the project's "
        "own supplementary scenarios and prose tests (repeatable; default: the shared upstream "
        "legacy and unified folders)",
    )
    parser.add_argument(
        "--format",
        choices=[*sorted(RENDERERS), "json"],
        default="text",
        dest="output_format",
        help="text (default), markdown (a page), or json (every field, for tools)",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="exit 0 even when a driver-side MUST is unchecked (only report it)"
    )
    parser.add_argument(
        "--write-combinations",
        action="store_true",
        help="write the checks generated from specs/coverage/dimensions.yml (specs/scenarios/supplementary/"
        "generated/, their traces and pin) and exit",
    )


def find_spec_text(value: str | None) -> Path | None:
    """The markdown file ``--spec-text`` names; a folder is searched for ``change-streams.md``.

    None when the user named none and there is no default at hand: the text is then not compared.
    """
    from harness.app.spec_sources import SpecSourceError, resolve
    from harness.formats.source_names import is_source

    if value is None:
        return DEFAULT_SPEC_TEXT if DEFAULT_SPEC_TEXT is not None and DEFAULT_SPEC_TEXT.is_file() else None
    try:
        path = resolve(value).path if is_source(value) else Path(value)
    except SpecSourceError as exc:
        raise CoverageInputError(str(exc)) from exc
    if path.is_file():
        return path
    if path.is_dir():
        for place in SPEC_TEXT_PLACES:
            candidate = (path / place).resolve()
            if candidate.is_file():
                return candidate
        raise CoverageInputError(
            f"--spec-text {value}: the folder {path} holds no change-streams.md "
            f"(looked for {', '.join(SPEC_TEXT_PLACES)})"
        )
    raise CoverageInputError(f"--spec-text {value}: {path} does not exist")


def default_specs() -> list[Path]:
    if SHARED_SPECS is None:
        return []
    return [p for p in (SHARED_SPECS / "upstream" / "legacy", SHARED_SPECS / "upstream" / "unified") if p.is_dir()]


def load_tests(specs: list[str]) -> list[LoadedTest]:
    """The tests of the ``spec`` suite (from ``specs``) and the ``prose`` suite, as the map needs them."""
    from harness.app import compose
    from harness.app.spec_sources import SpecSourceError, resolve

    try:
        paths = [SUPPLEMENTARY] + ([resolve(s).path for s in specs] if specs else default_specs())
    except SpecSourceError as exc:
        raise CoverageInputError(str(exc)) from exc
    for path in paths:
        if not Path(path).exists():
            raise CoverageInputError(f"--specs {path}: no such file or folder")
    suites = compose.plugins().suites
    tests = [t for name in COUNTED_SUITES if name in suites for t in suites[name].collect(paths)]
    return [LoadedTest(t.test_id, t.name, t.clauses) for t in tests]


def coverage_map(args: argparse.Namespace) -> CoverageMap:
    from harness.app.combinations import DimensionError
    from harness.formats.rule_files import (
        RuleFileError,
        load_allowances,
        load_breakages,
        load_catalogues,
        load_mapping,
    )

    path = find_spec_text(args.spec_text)
    try:
        text = path.read_text(encoding="utf-8") if path is not None else None
    except (OSError, UnicodeDecodeError) as exc:
        raise CoverageInputError(f"--spec-text {path}: cannot read: {exc}") from exc
    try:
        catalogues, index, breakages = load_catalogues(), load_mapping(), load_breakages()
        allowances = load_allowances()
        dimensions = _dimension_table()
    except (RuleFileError, DimensionError) as exc:
        raise CoverageInputError(str(exc)) from exc
    extra = [anchor for allowance in allowances for anchor in allowance.anchors]
    extra += [anchor for _, anchor in dimensions.anchors()] if dimensions is not None else []
    texts = _reference_texts(path.parent, catalogues, extra) if path is not None else {}
    spec_name = str(path) if path is not None else None
    tests = load_tests(args.specs)
    return build_map(text, spec_name, catalogues, index, tests, texts, breakages, allowances, dimensions)


def _dimension_table() -> DimensionTable | None:
    """The dimension table beside the catalogues (``dimensions.yml`` of the coverage folder), None when there is
    none there (a folder of other catalogues names no dimensions)."""
    from harness.app.combinations import load_dimensions
    from harness.formats import rule_files

    path = rule_files.COVERAGE_DIR / "dimensions.yml"
    return load_dimensions(path) if path.is_file() else None


def _reference_texts(folder: Path, catalogues: list[Catalogue], anchors: list[str] | None = None) -> dict[str, str]:
    """The other reference documents the catalogues (and the allowances' ``anchors``) point into, read from the
    spec text's folder (a document not there is left out; the map's problems say its anchors were not verified)."""
    names = {c.text for c in catalogues if c.text} | {
        split_anchor(anchor, "")[0] for c in catalogues for rule in c.rules for anchor in rule.anchors
    }
    names |= {split_anchor(anchor, "")[0] for anchor in anchors or []}
    names.discard("")
    texts = {}
    for name in sorted(names):
        other = folder / name
        if other.is_file():
            try:
                texts[name] = other.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CoverageInputError(f"{other}: cannot read: {exc}") from exc
    return texts


def command_write_combinations() -> int:
    """``--write-combinations``: every generated file rewritten from the table, and what was done."""
    from harness.app.combinations import DimensionError
    from harness.app.combinations_files import write
    from harness.app.spec_sources import SpecSourceError

    try:
        lines = write()
    except (DimensionError, SpecSourceError, ValueError, OSError) as exc:
        print(f"harness coverage --write-combinations: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


def command_coverage(args: argparse.Namespace) -> int:
    if args.write_combinations:
        return command_write_combinations()
    try:
        cmap = coverage_map(args)
    except CoverageInputError as exc:
        print(f"harness coverage: {exc}", file=sys.stderr)
        return 2
    if args.output_format == "json":
        print(json.dumps(as_json(cmap), indent=1))
    else:
        print(RENDERERS[args.output_format](cmap))
    failing = cmap.failing()
    if failing and not args.report_only:
        print(
            f"harness coverage: {len(failing)} gap(s): {', '.join(failing)} (a rule unchecked or unproven, a "
            "statement or sentence nothing accounts for; --report-only to exit 0)",
            file=sys.stderr,
        )
        return 1
    return 0
