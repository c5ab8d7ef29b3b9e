"""Write each table as Parquet (``tables/<name>/``) and as one CSV file (``tables/<name>.csv``).

Parquet keeps the types (lists, timestamps) for the next job; the CSV is for
people and spreadsheets (lists become ``a; b``, nested values JSON). Each
table is computed by one Spark action that brings its rows here as Arrow
(:mod:`reports.collect`); its Parquet file, its CSV and the page's rows are
all written from that one Arrow table, so no table is computed twice or
read back. Tables are computed a few at a time: on small inputs each is a
short Spark job whose time is mostly scheduling latency, and Spark runs jobs
from several threads at once. The files are written by this process, so on a
cluster ``--out`` needs to be writable here (the workers only read inputs).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyspark.sql import DataFrame

from reports.collect import TableRows, collect_arrow, write_csv_and_keep
from reports.session import is_connect

TABLES_DIR = "tables"
PARALLEL_WRITES = 4
PARQUET_FILE = "part-00000.parquet"


def tables_directory(out_dir: Path | str) -> Path:
    return Path(out_dir) / TABLES_DIR


def write_table(name: str, table: DataFrame, tables_dir: Path) -> TableRows:
    """``tables_dir/name/`` (Parquet, one file) and ``tables_dir/name.csv``; the rows kept for the page."""
    import pyarrow.parquet as pq

    if not is_connect(table.sparkSession):  # fair shares between tables (a Connect server runs each request apart)
        table.sparkSession.sparkContext.setLocalProperty("spark.scheduler.pool", name)
    rows = collect_arrow(table)
    parquet = tables_dir / name
    shutil.rmtree(parquet, ignore_errors=True)
    parquet.mkdir(parents=True)
    pq.write_table(rows, parquet / PARQUET_FILE, compression="snappy")
    return write_csv_and_keep(name, rows, tables_dir / f"{name}.csv")


def write_tables(tables: Mapping[str, DataFrame], out_dir: Path | str) -> dict[str, TableRows]:
    """Write every table under ``out_dir/tables``; each table's rows for the page, by name.

    Each table is taken from ``tables`` in the thread that computes it: when the mapping plans its tables
    as they are asked for (:func:`reports.job.tables_from`), one table is planned while others run.
    """
    tables_dir = tables_directory(out_dir)
    tables_dir.mkdir(parents=True, exist_ok=True)

    def write(name: str) -> TableRows:
        return write_table(name, tables[name], tables_dir)

    with ThreadPoolExecutor(max_workers=PARALLEL_WRITES, thread_name_prefix="write-table") as pool:
        futures = {name: pool.submit(write, name) for name in tables}
        return {name: future.result() for name, future in futures.items()}
