"""Version order: a small dimension table of the distinct versions, broadcast-joined back.

Text order is wrong for versions (``4.10`` < ``4.9``, ``0.7.0`` < ``0.7.0b3``).
The distinct driver and target versions are few (a few dozen), so they are
collected, ordered here by a PEP 440-ish key that also takes server versions
(``8.2.11``, ``8.0.0-rc1``), given a dense rank, and joined back to the
verdicts as a broadcast: raw rows never leave the executors.
"""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

_VERSION = re.compile(
    r"""^\s*v?(?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?
    (?:[-_.]?(?P<post_tag>post|rev|r)[-_.]?(?P<post>\d+)?)?
    (?:[-_.]?(?P<dev_tag>dev)[-_.]?(?P<dev>\d+)?)?
    (?:\+(?P<local>[a-z0-9.]+))?\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
#: Pre-release phases in order; a final release ranks after all of them.
_PHASES = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_FINAL = 3


def version_key(text: str) -> tuple[Any, ...]:
    """A sort key: ``1.0.dev1 < 1.0a1 < 1.0b2 < 1.0rc1 < 1.0 < 1.0.post1``; unparseable text sorts last, by text."""
    match = _VERSION.match(text or "")
    if not match:
        return (1, (text or "").lower())
    release = tuple(int(part) for part in match["release"].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    post = int(match["post"] or 0) if match["post_tag"] else -1
    dev = int(match["dev"] or 0) if match["dev_tag"] else float("inf")
    if match["pre"]:
        phase = (_PHASES[match["pre"].lower()], int(match["pre_n"] or 0))
    elif dev != float("inf") and post < 0:
        phase = (-1, 0)  # 1.0.dev1 comes before 1.0a1
    else:
        phase = (_FINAL, 0)
    return (0, release, phase, post, dev, match["local"] or "")


def ordered_versions(versions: list[str]) -> list[tuple[str, int]]:
    """Each version with its dense rank in version order (equal versions, like ``1.0`` and ``1.0.0``, share one)."""
    ranked, rank, previous = [], 0, None
    for version in sorted(set(versions), key=lambda text: (version_key(text), text)):  # ties: by text, stably
        key = version_key(version)
        if key != previous:
            rank, previous = rank + 1, key
        ranked.append((version, rank))
    return ranked


def version_dimension(spark: SparkSession, verdicts: DataFrame, columns: list[str]) -> DataFrame:
    """``version, version_rank`` for every distinct value of ``columns`` (a small table; broadcast it)."""
    distinct = (
        verdicts.select(F.explode(F.array(*[F.col(c) for c in columns])).alias("version"))
        .where(F.col("version").isNotNull())
        .distinct()
    )
    versions = [row["version"] for row in distinct.collect()]  # the distinct versions only: a few dozen
    return ranked_versions(spark, versions)


def ranked_versions(spark: SparkSession, versions: list[str]) -> DataFrame:
    """The dimension table of ``versions`` (distinct values, known already): ``version, version_rank``."""
    return spark.createDataFrame(ordered_versions(versions), "version string, version_rank int")


def with_version_rank(
    frame: DataFrame, column: str, dimension: DataFrame, rank_name: str = "version_rank"
) -> DataFrame:
    """``frame`` with the rank of ``column`` joined from the (broadcast) dimension table."""
    ranks = F.broadcast(dimension.select(F.col("version").alias(column), F.col("version_rank").alias(rank_name)))
    return frame.join(ranks, column, "left")
