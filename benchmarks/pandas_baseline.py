"""The report's core tables in plain pandas: the baseline the Spark job is measured against.

    python benchmarks/pandas_baseline.py /tmp/synth-1m --out /tmp/pandas-1m

"Plain pandas" means what a competent pandas user would write: load every
record into one DataFrame, then ``groupby``. Loading uses pyarrow's JSON
reader (the engine behind ``pd.read_json(engine="pyarrow")``) with an
explicit schema of just the fields the report reads, as the Spark job does;
without it pandas would turn every nested provenance object into Python
dicts and be measured on that instead. Everything after loading is pandas.

The definitions are those of docs/reports.md as the Spark job implements
them; the regular expressions, outcome sets and the z of the Wilson
interval are imported from ``reports`` so both sides apply the same rules
(Java's and Python's regex engines still run them independently, with
``re.ASCII`` matching Java's ASCII ``\\w``, ``\\d`` and ``\\b``). Tables:
``cells``, ``cell_files``, ``cell_tests``, ``flakiness``,
``failure_clusters``, each written as ``tables/<name>/data.parquet`` and
``tables/<name>.csv`` beside Spark's layout. Unlike the Spark job it reads
only JSON lines of ``cs-harness.result/1`` (no JUnit, no torn lines).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pj

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.side_timings import emit_timings
from reports.clusters import KEYS as CLUSTER_KEYS
from reports.clusters import LISTED_TESTS
from reports.conformance import CELL_AXES
from reports.flakiness import Z
from reports.normalise import ERROR_CODE, MESSAGE_PLACEHOLDERS, PATTERN_CHARS, UNKNOWN
from reports.outcomes import DECIDED, FAILING, OUTCOMES
from reports.schema import RESULT_KIND

CORE_TABLES = ("cells", "cell_files", "cell_tests", "flakiness", "failure_clusters")

_S = pa.string()
#: The fields the core tables read, and nothing else (unknown fields are skipped by the reader).
READ_SCHEMA = pa.schema(
    [
        ("record", _S),
        ("run_id", _S),
        ("format", _S),
        ("test_id", _S),
        ("test", _S),
        ("outcome", _S),
        ("message", _S),
        ("started_at", _S),
        ("failpoints", _S),
        (
            "target",
            pa.struct(
                [
                    ("kind", _S),
                    ("name", _S),
                    ("version", _S),
                    ("topology", _S),
                    (
                        "details",
                        pa.struct([("package_version", _S), ("network_faults", pa.struct([("toxiproxy", _S)]))]),
                    ),
                ]
            ),
        ),
        ("driver", pa.struct([("name", _S), ("version", _S)])),
        ("labels", pa.struct([("repeat", _S)])),
    ]
)
_PLACEHOLDERS = [(re.compile(regex, re.ASCII), placeholder) for regex, placeholder in MESSAGE_PLACEHOLDERS]


def input_files(paths: list[str]) -> list[Path]:
    """``*.jsonl`` files given directly or found under directories, in name order."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        found += sorted(path.rglob("*.jsonl")) if path.is_dir() else [path] if path.suffix != ".parquet" else []
    return found


def load(paths: list[str]) -> pd.DataFrame:
    """Every result record of ``paths`` as one flat DataFrame (the load step of load-then-groupby)."""
    options = pj.ParseOptions(explicit_schema=READ_SCHEMA, unexpected_field_behavior="ignore")
    frames = []
    for path in input_files(paths):
        table = pj.read_json(path, parse_options=options)
        frame = table.flatten().flatten().flatten().to_pandas()
        frames.append(frame[frame["record"] == RESULT_KIND])
    return pd.concat(frames, ignore_index=True)


def normalise(raw: pd.DataFrame) -> pd.DataFrame:
    """The normalised verdict columns the core tables use (docs/reports.md, "The normalised verdict")."""
    v = pd.DataFrame(
        {
            "run_id": raw["run_id"],
            "format": raw["format"],
            "test_id": raw["test_id"],
            "test": raw["test"],
            "outcome": raw["outcome"],
            "message": raw["message"],
            "started_at": pd.to_datetime(raw["started_at"], utc=True, format="ISO8601", errors="coerce"),
            "driver_name": raw["driver.name"],
            "driver_version": raw["driver.version"],
            "iteration_mode": raw.get("driver.iteration_mode", pd.Series(None, index=raw.index, dtype=object)),
            "target_name": raw["target.name"],
            "target_kind": raw["target.kind"],
            "topology": raw["target.topology"],
            "server_version": raw["target.version"],
            "target_version": raw["target.details.package_version"].fillna(raw["target.version"]),
            "failpoints": raw["failpoints"],
            "network_faults": raw["target.details.network_faults.toxiproxy"].notna(),
            "repeat": pd.to_numeric(raw["labels.repeat"], errors="coerce").astype("Int64"),
        }
    )
    v["spec_file"] = v["test_id"].str.split("::", n=1).str[0]
    v["cell"] = cell_names(v)
    failing = v["outcome"].isin(FAILING)
    codes = v.loc[failing, "message"].fillna("").str.extract(ERROR_CODE, flags=re.ASCII)
    v["error_code"] = pd.to_numeric(codes[0], errors="coerce").astype("Int64").reindex(v.index)
    v["error_code_name"] = codes[1].reindex(v.index)
    v["message_pattern"] = v.loc[failing, "message"].map(message_pattern).reindex(v.index)
    return v


def cell_names(v: pd.DataFrame) -> pd.Series:
    """``driver_name driver_version / target_name target_version topology failpoints`` (+ ``+netfaults``).

    ``+netfaults`` only for spec and prose runs made with network faults: a campaign brings its own
    Toxiproxy and stays in the cell it ran in (docs/reports.md, ``cell``).
    """

    def part(name: str) -> pd.Series:
        return v[name].fillna(UNKNOWN).astype(str)

    mode = v["iteration_mode"].where(v["iteration_mode"] != "")
    cell = (
        part("driver_name")
        + " "
        + part("driver_version")
        + ("[" + mode + "]").map(lambda m: f" {m}" if isinstance(m, str) else "")
        + " / "
        + part("target_name")
        + " "
        + part("target_version")
        + " "
        + part("topology")
    )
    cell = cell.where(v["failpoints"].isna(), cell + " " + v["failpoints"].fillna(""))
    configured = v["network_faults"] & (v["format"] != "campaign")
    return cell.where(~configured, cell + " +netfaults")


def message_pattern(message: str | None) -> str:
    """The first line with its variable parts replaced, in the report's order."""
    pattern = (message or "").split("\n", 1)[0]
    for regex, placeholder in _PLACEHOLDERS:
        pattern = regex.sub(placeholder, pattern)
    return pattern.strip(" ")[:PATTERN_CHARS]


def _counts(v: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """runs, verdicts, one column per outcome, decided, pass_rate and status, per group of ``keys``."""
    grouped = v.groupby(keys, dropna=False, observed=True)
    counts = grouped["outcome"].value_counts().unstack(fill_value=0)
    counts = counts.reindex(columns=list(OUTCOMES), fill_value=0).astype("int64")
    counts.columns.name = None
    out = pd.concat(
        [grouped["run_id"].nunique().rename("runs"), grouped.size().rename("verdicts"), counts], axis=1
    ).reset_index()
    out["decided"] = out["passed"] + out["failed"] + out["error"]
    out["pass_rate"] = (out["passed"] / out["decided"]).where(out["decided"] > 0)
    failures = out["failed"] + out["error"]
    out["status"] = np.select(
        [(out["passed"] > 0) & (failures > 0), failures > 0, out["passed"] > 0], ["flaky", "fail", "pass"], "skip"
    )
    return out


def _latest_failure_message(v: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Per group, the message of the most recent failing verdict (ties: the greatest message)."""
    failing = v[v["outcome"].isin(FAILING)]
    at = failing["started_at"].fillna(pd.Timestamp(0, tz="UTC"))
    ordered = failing.assign(_at=at).sort_values([*keys, "_at", "message"])
    return ordered.groupby(keys, observed=True)["message"].last()


def _joined(values: pd.Series) -> str:
    return ", ".join(sorted(set(values.dropna())))


def cells(v: pd.DataFrame) -> pd.DataFrame:
    out = _counts(v, ["cell", *CELL_AXES])
    extra = v.groupby("cell", observed=True).agg(
        target_kinds=("target_kind", _joined), server_versions=("server_version", _joined)
    )
    return out.merge(extra, on="cell").drop(columns="status").sort_values("cell", ignore_index=True)


def cell_files(v: pd.DataFrame) -> pd.DataFrame:
    return (
        _counts(v, ["cell", "spec_file"]).drop(columns="status").sort_values(["cell", "spec_file"], ignore_index=True)
    )


def cell_tests(v: pd.DataFrame) -> pd.DataFrame:
    keys = ["cell", "test_id"]
    out = _counts(v, keys)
    firsts = v.groupby(keys, observed=True).agg(spec_file=("spec_file", "first"), test=("test", "first"))
    out = out.merge(firsts, on=keys).merge(_latest_failure_message(v, keys).rename("message"), on=keys, how="left")
    return out.sort_values(keys, ignore_index=True)


def wilson(failures: pd.Series, runs: pd.Series, z: float = Z) -> tuple[pd.Series, pd.Series]:
    """Wilson score interval of ``failures / runs``, clipped to [0, 1]."""
    n = runs.astype("float64")
    p = failures / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (centre - half).clip(lower=0.0), (centre + half).clip(upper=1.0)


def flakiness(v: pd.DataFrame) -> pd.DataFrame:
    keys = ["cell", "test_id"]
    decided = v[v["outcome"].isin(DECIDED)].sort_values([*keys, "started_at", "run_id", "repeat"], na_position="first")
    failure = decided["outcome"].isin(FAILING)
    previous = failure.groupby([decided["cell"], decided["test_id"]], observed=True).shift(1)
    changed = previous.notna() & (failure != previous.astype("boolean"))
    out = (
        decided.assign(failure=failure, changed=changed)
        .groupby(keys, observed=True)
        .agg(
            test=("test", "min"), runs=("outcome", "size"), failures=("failure", "sum"), transitions=("changed", "sum")
        )
        .reset_index()
    )
    out = out.merge(_latest_failure_message(v, keys).rename("message"), on=keys, how="left")
    out["flake_rate"] = out["failures"] / out["runs"]
    out["wilson_low"], out["wilson_high"] = wilson(out["failures"], out["runs"])
    out["classification"] = np.select(
        [out["failures"] == 0, out["failures"] < out["runs"], out["runs"] == 1],
        ["stable", "flaky", "one failed run"],
        "failing",
    )
    return out.sort_values(keys, ignore_index=True)


def failure_clusters(v: pd.DataFrame) -> pd.DataFrame:
    keys = list(CLUSTER_KEYS)
    failing = v[v["outcome"].isin(FAILING)].sort_values(["test_id", "message"])
    grouped = failing.groupby(keys, dropna=False, observed=True)
    out = grouped.agg(
        failures=("test_id", "size"),
        tests=("test_id", "nunique"),
        cells=("cell", "nunique"),
        example_test=("test_id", "first"),
        example_message=("message", "first"),
        test_ids=("test_id", lambda ids: sorted(set(ids))[:LISTED_TESTS]),
    ).reset_index()
    return out.sort_values("failures", ascending=False, ignore_index=True)


TABLE_MAKERS = {
    "cells": cells,
    "cell_files": cell_files,
    "cell_tests": cell_tests,
    "flakiness": flakiness,
    "failure_clusters": failure_clusters,
}


def parquet_files(paths: list[str]) -> list[Path]:
    """Normalised verdicts in Parquet (a history ``harness report --append-to`` keeps), given or under directories."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        found += sorted(path.rglob("*.parquet")) if path.is_dir() else [path] if path.suffix == ".parquet" else []
    return found


def load_verdicts(paths: list[str]) -> pd.DataFrame:
    """Normalised verdicts from JSON lines and from Parquet histories, in one frame."""
    frames = []
    if input_files(paths):
        frames.append(normalise(load(paths)))
    history = parquet_files(paths)
    if history:
        columns = list(frames[0].columns) if frames else None
        frames.append(pd.read_parquet(history, columns=columns))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def compute_tables(paths: list[str]) -> tuple[dict[str, pd.DataFrame], int]:
    """The core tables over ``paths`` and how many verdicts they were made from."""
    verdicts = load_verdicts(paths)
    return {name: make(verdicts) for name, make in TABLE_MAKERS.items()}, len(verdicts)


def write_tables(tables: dict[str, pd.DataFrame], out_dir: Path) -> None:
    """``tables/<name>/data.parquet`` and ``tables/<name>.csv``, like the Spark job's layout."""
    root = Path(out_dir) / "tables"
    for name, table in tables.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        table.to_parquet(root / name / "data.parquet", index=False)
        csv = table.copy()
        for column in csv.columns:
            if csv[column].map(lambda x: isinstance(x, (list, np.ndarray))).any():
                csv[column] = csv[column].map(lambda x: "; ".join(x) if x is not None else None)
        csv.to_csv(root / f"{name}.csv", index=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="results files or directories of *.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timings", type=Path, help="write the phase timings here as JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tables, rows = compute_tables(args.inputs)
    computed = time.perf_counter()
    write_tables(tables, args.out)
    done = time.perf_counter()
    timings = {
        "rows": rows,
        "compute_s": computed - started,
        "write_s": done - computed,
        "job_s": done - started,
        "pandas_version": pd.__version__,
        "pyarrow_version": pa.__version__,
    }
    emit_timings(timings, args.timings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
