"""The cells a matrix expands to: one pymongo release x one target (and its SecantusDB release).

A cell id is stable, readable and safe as a directory name, because it names
the cell's results directory and is the ``cell`` label in every record:
``pymongo-4.20.0__embedded__secantusdb-0.7.0b3``. A connection string never
appears in an id or a label (it may hold a password): ``uri`` cells are named
by a hash of it and labelled with the redacted string.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from itertools import product
from typing import Any

from harness.matrix.definition import VERSIONED_TARGETS, MatrixDefinition
from harness.targets.connection_strings import redact as redact_uri

#: Extras of the harness a target needs in the cell's environment.
TARGET_EXTRAS = {"testcontainers": ("containers",)}
#: The extra a campaign needs (its network faults drive Toxiproxy's HTTP API through requests).
CAMPAIGN_EXTRAS = ("faults",)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


@dataclass(frozen=True)
class Cell:
    pymongo: str
    #: As ``harness run --target`` takes it: ``embedded``, ``secantusdb-daemon``, ``testcontainers=mongo:8.0``,
    #: ``uri=...``.
    target: str
    #: The SecantusDB release to install; ``None``: the one the harness's pins resolve to.
    secantusdb: str | None = None
    #: Whether each repeat also runs the matrix's campaign (on SecantusDB targets only: see steps.py).
    campaign: bool = False

    @property
    def target_name(self) -> str:
        return self.target.partition("=")[0]

    @property
    def id(self) -> str:
        name, _, argument = self.target.partition("=")
        if name == "uri":
            target = f"uri-{hashlib.sha256(argument.encode()).hexdigest()[:10]}"
        else:
            target = _safe(self.target.replace("=", "-"))
        release = "" if name in TARGET_EXTRAS or name == "uri" else f"__secantusdb-{self.secantusdb or 'pinned'}"
        return f"pymongo-{_safe(self.pymongo)}__{target}{release}"

    @property
    def extras(self) -> tuple[str, ...]:
        """Extras of the harness the cell's environment installs (not part of the id)."""
        return TARGET_EXTRAS.get(self.target_name, ()) + (CAMPAIGN_EXTRAS if self.campaign else ())

    @property
    def requirements(self) -> tuple[str, ...]:
        """What the cell's environment installs besides the harness itself."""
        pins = [f"pymongo=={self.pymongo}"]
        if self.secantusdb is not None:
            pins.append(f"secantusdb=={self.secantusdb}")
        return tuple(pins)

    def labels(self, matrix_id: str) -> dict[str, Any]:
        """The cell's provenance: the labels every record of it carries (``repeat`` is added per run)."""
        labels = {"matrix": matrix_id, "cell": self.id, "pymongo": self.pymongo, "target": redact_uri(self.target)}
        if self.secantusdb is not None:
            labels["secantusdb"] = self.secantusdb
        return labels

    def requested(self) -> dict[str, Any]:
        return {"pymongo": self.pymongo, "target": redact_uri(self.target), "secantusdb": self.secantusdb}


def expand(definition: MatrixDefinition) -> list[Cell]:
    """Every cell, drivers outermost, in a stable order (the manifest and the summary follow it)."""
    targets = [(target, release) for release, target in product(definition.secantusdb, definition.targets)]
    targets += [(server, None) for server in definition.servers]
    return [
        Cell(
            pymongo=pymongo,
            target=target,
            secantusdb=release,
            campaign=definition.campaign is not None and target.partition("=")[0] in VERSIONED_TARGETS,
        )
        for pymongo, (target, release) in product(definition.pymongo, targets)
    ]
