"""Write each table as Parquet (``tables/<name>/``) and as one CSV file (``tables/<name>.csv``).

Parquet keeps the types (lists, timestamps) for the next job; the CSV is for
people and spreadsheets (lists become ``a; b``, nested values JSON). Each
table is computed once, into Parquet; the CSV and the page's rows are then
streamed from that Parquet in one pass (:mod:`reports.collect`). Tables are
written a few at a time: each is a small Spark job whose time is mostly
scheduling latency, and Spark runs jobs from several threads at once. In
cluster mode the output directory must be on a filesystem the workers share
with the driver (on one machine it is).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from reports.collect import TableRows, stream_table

TABLES_DIR = "tables"
PARALLEL_WRITES = 4


def tables_directory(out_dir: Path | str) -> Path:
    return Path(out_dir) / TABLES_DIR


def write_table(spark: SparkSession, name: str, table: DataFrame, tables_dir: Path) -> TableRows:
    """``tables_dir/name/`` (Parquet, one file) and ``tables_dir/name.csv``; the rows kept for the page."""
    parquet = tables_dir / name
    table.coalesce(1).write.mode("overwrite").parquet(str(parquet))
    return stream_table(name, spark.read.parquet(str(parquet)), tables_dir / f"{name}.csv")


def write_tables(tables: dict[str, DataFrame], out_dir: Path | str) -> dict[str, TableRows]:
    """Write every table under ``out_dir/tables``; each table's rows for the page, by name."""
    tables_dir = tables_directory(out_dir)
    tables_dir.mkdir(parents=True, exist_ok=True)
    spark = next(iter(tables.values())).sparkSession
    with ThreadPoolExecutor(max_workers=PARALLEL_WRITES, thread_name_prefix="write-table") as pool:
        futures = {name: pool.submit(write_table, spark, name, table, tables_dir) for name, table in tables.items()}
        return {name: future.result() for name, future in futures.items()}
