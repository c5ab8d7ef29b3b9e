"""Do the Spark job and the pandas baseline say the same thing about the same data?

    python benchmarks/report_crosscheck.py /tmp/bench/spark-1m /tmp/bench/pandas-1m

Two independent implementations of one contract (docs/reports.md) checked
against each other, table by table, on their written Parquet: the same keys
on both sides, and per key the same counts, pass rates, statuses, flaky
classification, transitions, Wilson bounds and cluster sizes. Every
disagreement is listed with its key and both values, so the wrong side can
be found by looking at those rows of the input. Floats are compared with a
tolerance of 1e-9; lists (a cluster's test ids) as lists.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

#: table -> (key columns, compared columns)
CHECKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cells": (
        ("cell",),
        (
            "runs",
            "verdicts",
            "passed",
            "failed",
            "error",
            "skipped",
            "decided",
            "pass_rate",
            "target_kinds",
            "server_versions",
        ),
    ),
    "cell_files": (("cell", "spec_file"), ("runs", "verdicts", "passed", "failed", "error", "skipped", "pass_rate")),
    "cell_tests": (
        ("cell", "test_id"),
        ("runs", "verdicts", "passed", "failed", "error", "skipped", "pass_rate", "status", "message"),
    ),
    "flakiness": (
        ("cell", "test_id"),
        ("runs", "failures", "transitions", "flake_rate", "wilson_low", "wilson_high", "classification", "message"),
    ),
    "failure_clusters": (
        ("error_code", "error_code_name", "message_pattern"),
        ("failures", "tests", "cells", "example_test", "example_message", "test_ids"),
    ),
}
EXAMPLES = 5
_NULL_KEY = "\x00null"


def read_table(tables_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(tables_dir / name)


def _same(a: Any, b: Any) -> bool:
    if _missing(a) and _missing(b):
        return True
    if _missing(a) or _missing(b):
        return False
    if hasattr(a, "__len__") and not isinstance(a, str):
        return list(a) == list(b)
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _keyed(frame: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """Index by the key columns, nulls made comparable (a cluster without a code is a real key)."""
    frame = frame.copy()
    for key in keys:
        frame[key] = frame[key].map(_key_text)
    return frame.set_index(list(keys))


def _key_text(value: Any) -> str:
    """One spelling per key value: an integer column with nulls reads back as floats on one side."""
    if _missing(value):
        return _NULL_KEY
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def compare_table(name: str, spark: pd.DataFrame, pandas: pd.DataFrame) -> dict[str, Any]:
    keys, columns = CHECKS[name]
    left, right = _keyed(spark, keys), _keyed(pandas, keys)
    only_spark = left.index.difference(right.index)
    only_pandas = right.index.difference(left.index)
    common = left.index.intersection(right.index)
    left, right = left.loc[common], right.loc[common]
    differences: dict[str, dict[str, Any]] = {}
    for column in columns:
        if column not in left.columns or column not in right.columns:
            differences[column] = {"count": -1, "problem": f"missing on {'spark' if column not in left else 'pandas'}"}
            continue
        differing = [key for key, a, b in zip(common, left[column], right[column], strict=True) if not _same(a, b)]
        if differing:
            differences[column] = {
                "count": len(differing),
                "examples": [
                    {
                        "key": list(key) if isinstance(key, tuple) else [key],
                        "spark": _shown(left.at[key, column]),
                        "pandas": _shown(right.at[key, column]),
                    }
                    for key in differing[:EXAMPLES]
                ],
            }
    return {
        "rows_spark": len(spark),
        "rows_pandas": len(pandas),
        "only_spark": [list(k) for k in only_spark[:EXAMPLES]],
        "only_spark_count": len(only_spark),
        "only_pandas": [list(k) for k in only_pandas[:EXAMPLES]],
        "only_pandas_count": len(only_pandas),
        "differences": differences,
        "agree": not (len(only_spark) or len(only_pandas) or differences),
    }


def _shown(value: Any) -> Any:
    if _missing(value):
        return None
    if hasattr(value, "__len__") and not isinstance(value, str):
        return list(value)
    return value.item() if hasattr(value, "item") else value


def flaky_set(flakiness: pd.DataFrame) -> set[tuple[str, str]]:
    rows = flakiness[flakiness["classification"] == "flaky"]
    return set(zip(rows["cell"], rows["test_id"], strict=True))


def crosscheck(spark_dir: Path, pandas_dir: Path) -> dict[str, Any]:
    """Every core table compared; plus the headline facts (flaky set, cluster count) side by side."""
    spark_tables = {name: read_table(spark_dir / "tables", name) for name in CHECKS}
    pandas_tables = {name: read_table(pandas_dir / "tables", name) for name in CHECKS}
    tables = {name: compare_table(name, spark_tables[name], pandas_tables[name]) for name in CHECKS}
    spark_flaky, pandas_flaky = flaky_set(spark_tables["flakiness"]), flaky_set(pandas_tables["flakiness"])
    return {
        "agree": all(t["agree"] for t in tables.values()),
        "headline": {
            "flaky_spark": len(spark_flaky),
            "flaky_pandas": len(pandas_flaky),
            "flaky_only_spark": sorted(spark_flaky - pandas_flaky)[:EXAMPLES],
            "flaky_only_pandas": sorted(pandas_flaky - spark_flaky)[:EXAMPLES],
            "clusters_spark": len(spark_tables["failure_clusters"]),
            "clusters_pandas": len(pandas_tables["failure_clusters"]),
            "cells_spark": len(spark_tables["cells"]),
            "cells_pandas": len(pandas_tables["cells"]),
        },
        "tables": tables,
    }


def describe(result: dict[str, Any]) -> list[str]:
    """The result as lines for a person: one per table, then each disagreement with examples."""
    h = result["headline"]
    lines = [
        (
            f"cross-check: {'AGREE' if result['agree'] else 'DISAGREE'} -- "
            f"cells {h['cells_spark']}/{h['cells_pandas']}, "
            f"flaky {h['flaky_spark']}/{h['flaky_pandas']}, clusters {h['clusters_spark']}/{h['clusters_pandas']} "
            f"(spark/pandas)"
        )
    ]
    for name, table in result["tables"].items():
        lines.append(
            f"  {name}: {'agree' if table['agree'] else 'DISAGREE'} ({table['rows_spark']} rows spark, "
            f"{table['rows_pandas']} pandas)"
        )
        if table["only_spark_count"]:
            lines.append(f"    {table['only_spark_count']} key(s) only in spark, e.g. {table['only_spark'][:2]}")
        if table["only_pandas_count"]:
            lines.append(f"    {table['only_pandas_count']} key(s) only in pandas, e.g. {table['only_pandas'][:2]}")
        for column, diff in table["differences"].items():
            lines.append(
                f"    {column}: {diff['count']} differ" + (f" ({diff['problem']})" if "problem" in diff else "")
            )
            for example in diff.get("examples", [])[:2]:
                lines.append(f"      {example['key']}: spark={example['spark']!r} pandas={example['pandas']!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spark_out", type=Path, help="output directory of benchmarks/spark_side.py")
    parser.add_argument("pandas_out", type=Path, help="output directory of benchmarks/pandas_baseline.py")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = crosscheck(args.spark_out, args.pandas_out)
    print("\n".join(describe(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 0 if result["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
