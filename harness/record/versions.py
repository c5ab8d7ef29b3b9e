"""The one version order, for server and driver versions alike.

A pre-release ranks before its release, as semver and PEP 440 have it: ``1.0.dev1 < 1.0a1 < 1.0b2 <
1.0rc1 < 1.0 < 1.0.post1``, and a server's ``8.0.0-rc1 < 8.0.0``. Text order is wrong for versions
(``4.10`` < ``4.9``), missing trailing parts are zeros (``7.0`` equals ``7.0.0``), and text that is no
version sorts after every version, by its text. The report ranks versions by :func:`version_key`, and the
harness compares them with :func:`compare_versions`.

``runOnRequirements`` bounds compare :func:`release` numbers only (:func:`compare_releases`): a release
candidate of 8.0 has 8.0's features, so ``minServerVersion: "8.0"`` runs on ``8.0.0-rc1``, as the drivers'
own runners do (they compare the server's ``versionArray`` without its pre-release part). That is a rule of
the unified test format's bounds, not another order: an rc still ranks before its release everywhere else.
"""

from __future__ import annotations

import re
from typing import Any

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
    """A sort key in the one order (module docstring); unparseable text sorts last, by its lowercased text."""
    match = _VERSION.match(text or "")
    if not match:
        return (1, (text or "").lower())
    numbers = tuple(int(part) for part in match["release"].split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    post = int(match["post"] or 0) if match["post_tag"] else -1
    dev = int(match["dev"] or 0) if match["dev_tag"] else float("inf")
    if match["pre"]:
        phase = (_PHASES[match["pre"].lower()], int(match["pre_n"] or 0))
    elif dev != float("inf") and post < 0:
        phase = (-1, 0)  # 1.0.dev1 comes before 1.0a1
    else:
        phase = (_FINAL, 0)
    return (0, numbers, phase, post, dev, match["local"] or "")


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, the same as, or newer than ``b`` in the one order."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


def release(version: str) -> tuple[int, ...]:
    """``"4.2.0-rc1"`` -> ``(4, 2, 0)``: the leading numeric parts, the pre-release left out (none: ``()``)."""
    parts = []
    for piece in re.split(r"[.\-+]", str(version)):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def compare_releases(a: str, b: str) -> int:
    """-1, 0 or 1 comparing :func:`release` numbers only (missing parts are zeros): the bounds of
    ``runOnRequirements`` (module docstring)."""
    ta, tb = release(a), release(b)
    width = max(len(ta), len(tb))
    ta, tb = ta + (0,) * (width - len(ta)), tb + (0,) * (width - len(tb))
    return (ta > tb) - (ta < tb)


def ordered_versions(versions: list[str]) -> list[tuple[str, int]]:
    """Each version with its dense rank in the one order (equal versions, like ``1.0`` and ``1.0.0``, share one)."""
    ranked, rank, previous = [], 0, None
    for version in sorted(set(versions), key=lambda text: (version_key(text), text)):  # ties: by text, stably
        key = version_key(version)
        if key != previous:
            rank, previous = rank + 1, key
        ranked.append((version, rank))
    return ranked
