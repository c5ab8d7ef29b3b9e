"""The campaign's summary table, for the person reading the terminal."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, TextIO


def print_summary(result: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    kinds = Counter(a.fault.kind for a in result.applied)
    allowed = Counter(e.reason.split(" (fault ")[0] for e in result.errors if e.allowed)
    print(f"\ncampaign seed={result.seed}: {result.outcome.upper()} in {result.duration_s:.1f}s", file=out)
    print(f"  events received   {result.received}", file=out)
    print(
        f"  faults injected   {len(result.applied)}  ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})",
        file=out,
    )
    if result.skipped_kinds:
        print(f"  kinds skipped     {', '.join(result.skipped_kinds)} (each said why above)", file=out)
    print(f"  driver resumes    {result.driver_resumes}  (aggregates sent: {result.aggregates})", file=out)
    print(
        f"  errors seen       {len(result.errors)}  allowed by the spec: {len(result.errors) - len(result.disallowed)}",
        file=out,
    )
    for reason, count in allowed.most_common():
        print(f"      {count:4d}  {reason}", file=out)
    for error in result.disallowed[:10]:
        print(
            f"  NOT ALLOWED after {error.received} events ({error.fault or 'no fault in place'}): "
            f"{error.error} -- {error.reason}",
            file=out,
        )
    print(f"  delivery          {result.message if result.anomalies else 'exactly once, in order'}", file=out)
    for problem in result.problems[:10]:
        print(f"  PROBLEM           {problem}", file=out)
