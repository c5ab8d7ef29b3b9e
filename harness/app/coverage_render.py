"""The coverage map as text for a terminal or as a markdown page (``harness coverage --format``).

Both list the rules in the map's order (driver-side MUSTs first), each with what
of its dimensions its checks reach (``covers:``, and what they do not, with why),
then the rules nothing checks, the dimension values no run here produces, then
everything that did not line up: statements of the
spec text no rule names, anchors the text no longer has, mapping entries whose
tests were not loaded, and other problems. Spec sentences are shown only from
the user's own copy of the text (an unmapped statement's opening words), so
the user can add a rule for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from harness.app.coverage_map import NOT_COMPARED, STATUSES, CoverageMap, RuleCoverage, ordered

#: Tests named per rule in the text output before "+N more".
SHOWN_TESTS = 3
EXCERPT_CHARS = 90

_GROUP_TITLES = (
    ("driver-side MUST", lambda c: c.rule.driver_side and c.rule.level == "MUST" and c.status != "not-checkable"),
    ("driver-side SHOULD", lambda c: c.rule.driver_side and c.rule.level == "SHOULD" and c.status != "not-checkable"),
    ("server-side", lambda c: not c.rule.driver_side and c.status != "not-checkable"),
    ("not checkable by a run", lambda c: c.status == "not-checkable"),
)


def _groups(cmap: CoverageMap) -> list[tuple[str, list[RuleCoverage]]]:
    rules = ordered(cmap.rules)
    return [(title, [c for c in rules if belongs(c)]) for title, belongs in _GROUP_TITLES]


def _tests(names: list[str], limit: int | None) -> str:
    if limit is None or len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" (+{len(names) - limit} more)"


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 3] + "..."


def summary_line(cmap: CoverageMap) -> str:
    counts = Counter(c.status for c in cmap.rules)
    must = [c for c in cmap.rules if c.rule.driver_side and c.rule.level == "MUST" and c.status != "not-checkable"]
    must_checked = sum(1 for c in must if c.status == "checked")
    unmapped = len(cmap.unmapped) if cmap.spec_text is not None else "not looked for"
    unaccounted = len(cmap.unaccounted) if cmap.spec_text is not None else "not looked for"
    by_kind = "; ".join(_kind_counts(cmap, kind) for kind in ("driver", "server"))
    return (
        f"{len(cmap.rules)} rules: {counts['checked']} checked and proven, {counts['unproven']} checked but unproven, "
        f"{counts['exercised']} only exercised, {counts['unchecked']} unchecked, "
        f"{counts['not-checkable']} not checkable by a run ({by_kind}); "
        f"driver-side MUSTs checked: {must_checked}/{len(must)}; unmapped statements: {unmapped}; "
        f"unaccounted sentences: {unaccounted}; breakages: {len(cmap.breakages)}; {_allowance_counts(cmap)}; "
        f"{_dimension_counts(cmap)}tests loaded: {cmap.tests_loaded}"
    )


def _dimension_counts(cmap: CoverageMap) -> str:
    """``dimensions: 5 (48 values, 35 reachable); ranged rules: 24, every reachable value reached: 20; ``"""
    if cmap.dimensions is None:
        return ""
    values = [v for d in cmap.dimensions.dimensions for v in d.values]
    ranged = [c for c in cmap.rules if c.combinations is not None]
    whole = sum(1 for c in ranged if c.combinations is not None and not c.combinations.gaps())
    return (
        f"dimensions: {len(cmap.dimensions.dimensions)} ({len(values)} values, "
        f"{sum(1 for v in values if not v.unreachable)} reachable here); rules ranging over them: {len(ranged)}, "
        f"every reachable value and planned pair reached: {whole}; "
    )


def _covers(c: RuleCoverage) -> list[str]:
    """The ``covers:`` line of a ranged rule, and one line per value or pair its checks do not reach, with why."""
    if c.combinations is None or c.status == "not-checkable":
        return []
    return [f"covers: {c.combinations.summary()}"] + [f"  not reached: {gap}" for gap in c.combinations.gaps()]


def _unreachable(cmap: CoverageMap) -> list[tuple[str, str]]:
    """(dimension=value, why) of every value no run here produces."""
    if cmap.dimensions is None:
        return []
    return [(f"{d.id}={v.id}", v.unreachable) for d in cmap.dimensions.dimensions for v in d.values if v.unreachable]


def _unranged(cmap: CoverageMap) -> list[str]:
    """``dimension=value`` of every value a run could produce that no rule's range holds yet (nothing counts it)."""
    if cmap.dimensions is None:
        return []
    return [
        f"{d.id}={v.id}"
        for d in cmap.dimensions.dimensions
        for v in d.values
        if not v.unreachable and not any(r.covers(v) for r in d.rules)
    ]


def _allowance_counts(cmap: CoverageMap) -> str:
    checks = sum(len(a.rejected_by) for a in cmap.rejected())
    accepting = sum(1 for c in cmap.rules if c.allowances and not c.rejected)
    rejecting = sum(1 for c in cmap.rules if c.rejected)
    return (
        f"allowances: {len(cmap.allowances)} (rules whose checks accept them: {accepting}; rules with a check that "
        f"rejects one: {rejecting}; rejecting checks: {checks}); rules with room and no allowance: "
        f"{len(cmap.room_unproven())}"
    )


def _kind_counts(cmap: CoverageMap, kind: str) -> str:
    rules = [c for c in cmap.rules if c.rule.kind == kind]
    counts = Counter(c.status for c in rules)
    return f"{kind} {len(rules)}: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])


def accounting_lines(cmap: CoverageMap) -> list[str]:
    """Per reference text: how many of its sentences rules name, how many are informative, how many nothing has."""
    loose = Counter(u.text_file for u in cmap.unaccounted)
    return [
        f"{name}: {total} sentences in scope, {ruled} named by rules, {listed} informative, {loose[name]} unaccounted"
        for name, (total, ruled, listed) in sorted(cmap.accounting.items())
    ]


def _proof(c: RuleCoverage) -> str:
    if c.breakages is None:
        return ""
    if not c.breakages:
        return "none (the check is unproven)"
    return ", ".join(c.breakages)


def _allowed(c: RuleCoverage) -> str:
    if c.allowances is None:
        return ""
    if not c.allowances:
        return f"none (room unproven: {c.rule.room})" if c.room_unproven else "none"
    return ", ".join(
        f"{a} (rejected today by {len(c.rejected[a])} of its checks)" if a in c.rejected else a for a in c.allowances
    )


def _title(cmap: CoverageMap) -> str:
    if cmap.spec_text is None:
        return f"Coverage of the project's rule catalogues; {NOT_COMPARED}"
    return f"Coverage of {cmap.spec_text}"


def _trailer(cmap: CoverageMap, bullet: str) -> list[str]:
    lines: list[str] = []
    unchecked = [c for c in ordered(cmap.rules) if c.status in ("unchecked", "exercised")]
    lines += ["", f"Nothing checks ({len(unchecked)}):"]
    lines += [
        f"{bullet}{c.rule.id} ({c.rule.kind} {c.rule.level}"
        f"{', only exercised' if c.status == 'exercised' else ''}): {c.rule.paraphrase}"
        for c in unchecked
    ]
    unproven = [c for c in ordered(cmap.rules) if c.status == "unproven"]
    if unproven:
        lines += ["", f"Checked, but no breakage proves the check ({len(unproven)}):"]
        lines += [f"{bullet}{c.rule.id} ({c.rule.kind} {c.rule.level}): {c.rule.paraphrase}" for c in unproven]
    room = cmap.room_unproven()
    if room:
        lines += ["", f"Room the references leave that no allowance proves the checks accept ({len(room)}):"]
        lines += [f"{bullet}{c.rule.id} ({c.rule.kind} {c.rule.level}): {c.rule.room}" for c in room]
    rejected = cmap.rejected()
    if rejected:
        count = sum(len(a.rejected_by) for a in rejected)
        lines += ["", f"Checks that reject a permitted variation today ({count}; findings against the checks):"]
        lines += [
            f"{bullet}{a.id} ({a.side}): {r.test}: {' '.join(r.why.split())}" for a in rejected for r in a.rejected_by
        ]
    unreachable = _unreachable(cmap)
    if unreachable:
        lines += ["", f"Dimension values no run here produces ({len(unreachable)}; specs/coverage/dimensions.yml):"]
        lines += [f"{bullet}{value}: {why}" for value, why in unreachable]
    unranged = _unranged(cmap)
    if unranged:
        lines += ["", f"Dimension values in no rule's range yet, so no check counts them ({len(unranged)}):"]
        lines += [f"{bullet}{value}" for value in unranged]
    if cmap.accounting:
        lines += ["", "Reference texts, sentence by sentence:"] + [f"{bullet}{line}" for line in accounting_lines(cmap)]
    if cmap.unaccounted:
        lines += ["", f"Sentences no rule names and no catalogue lists as informative ({len(cmap.unaccounted)}):"]
        lines += [
            f"{bullet}{u.text_file} line {u.statement.line} [{u.statement.section}] anchor {u.statement.key}: "
            f'"{_excerpt(u.statement.text)}"'
            for u in cmap.unaccounted
        ]
    if cmap.unmapped:
        lines += ["", f"Statements of the spec text that no rule names ({len(cmap.unmapped)}; new or reworded):"]
        for u in cmap.unmapped:
            s = u.statement
            maybe = f" (perhaps a rewording of {', '.join(u.maybe)})" if u.maybe else ""
            lines.append(
                f'{bullet}line {s.line} [{s.section}] {s.level} {s.scope} anchor {s.key}: "{_excerpt(s.text)}"{maybe}'
            )
    stale = [c for c in cmap.rules if c.missing_anchors]
    if stale:
        lines += ["", f"Rules whose statement the spec text no longer has ({len(stale)}):"]
        lines += [
            f'{bullet}{c.rule.id}: anchor(s) {", ".join(c.missing_anchors)} not found (cue: "{c.rule.cue}")'
            for c in stale
        ]
    if cmap.unverified:
        lines += [
            "",
            (
                f"Mapping entries whose tests were not loaded, taken as written ({len(cmap.unverified)}; "
                "give --specs to verify them):"
            ),
        ]
        lines += [f"{bullet}{entry}" for entry in cmap.unverified]
    if cmap.problems:
        lines += ["", f"Problems ({len(cmap.problems)}):"] + [f"{bullet}{p}" for p in cmap.problems]
    return lines


def render_text(cmap: CoverageMap) -> str:
    lines = [_title(cmap), summary_line(cmap)]
    for title, rules in _groups(cmap):
        if not rules:
            continue
        lines += ["", f"== {title} ({len(rules)})"]
        for c in rules:
            mark = {
                "checked": "ok ",
                "unproven": "?? ",
                "exercised": "~~ ",
                "unchecked": "-- ",
                "not-checkable": "n/a",
            }[c.status]
            lines.append(f"{mark} {c.rule.id:<38} {c.rule.level:<6} [{c.rule.section}] {c.rule.paraphrase}")
            if c.rule.conditions:
                lines.append(f"      applies: {c.rule.conditions}")
            if c.checked_by:
                lines.append(f"      checked by: {_tests(c.checked_by, SHOWN_TESTS)}")
            if c.clauses:
                lines.append(f"      can report: {', '.join(c.clauses)}")
                lines.append(f"      compares: {c.rule.check or 'not said'}")
            if c.breakages is not None and c.status != "not-checkable":
                lines.append(f"      broken by: {_proof(c)}")
            if c.allowances is not None and c.status != "not-checkable" and (c.allowances or c.rule.room):
                lines.append(f"      allowed: {_allowed(c)}")
            lines += [f"      {line}" for line in _covers(c)]
            if c.exercised_by:
                lines.append(f"      exercised by: {_tests(c.exercised_by, SHOWN_TESTS)}")
            if c.rule.not_checkable:
                lines.append(f"      not checkable: {c.rule.not_checkable}")
    return "\n".join(lines + _trailer(cmap, "  - "))


def render_markdown(cmap: CoverageMap) -> str:
    text = f"Spec text: `{cmap.spec_text}`" if cmap.spec_text is not None else f"Spec text: {NOT_COMPARED}"
    lines = ["# Coverage of the change-streams spec", "", text, "", summary_line(cmap)]
    for title, rules in _groups(cmap):
        if not rules:
            continue
        lines += [
            "",
            f"## {title} ({len(rules)})",
            "",
            "| rule | level | section | rule, paraphrased | status | tests | compares | broken by | allowed | covers |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for c in rules:
            tests = _tests(c.checked_by, None) or (
                f"exercised by: {_tests(c.exercised_by, None)}" if c.exercised_by else c.rule.not_checkable or ""
            )
            cells = [
                c.rule.id,
                c.rule.level,
                c.rule.section,
                c.rule.paraphrase,
                c.status,
                tests,
                c.rule.check if c.checked_by else "",
                _proof(c) if c.status != "not-checkable" else "",
                _allowed(c) if c.status != "not-checkable" else "",
                "; ".join(_covers(c)),
            ]
            cells = [cell.replace("|", "\\|") for cell in cells]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines + _trailer(cmap, "- "))


RENDERERS: dict[str, Callable[[CoverageMap], str]] = {"text": render_text, "markdown": render_markdown}
