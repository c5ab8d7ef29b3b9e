"""The cells a matrix expands to: one driver release x one target (and its release).

A cell id is stable, readable and safe as a directory name, because it names
the cell's results directory, is the ``cell`` label in every record, and is
what ``harness matrix run --cell ID`` takes on another machine:
``pymongo-4.20.0__embedded__secantusdb-0.7.0b3``,
``node-6.10.0__mongo-java-server-1.47.0``, ``go-pinned__embedded__secantusdb-pinned``
(``pinned``: the release the harness pins). A connection string never appears
in an id or a label (it may hold a password): ``uri`` cells are named by a
hash of it and labelled with the redacted string.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from itertools import product
from typing import Any

from harness.matrix import catalogue
from harness.matrix.definition import Driver, MatrixDefinition
from harness.shared.connection_strings import redact as redact_uri

#: The extra a campaign needs (its network faults drive Toxiproxy's HTTP API through requests).
CAMPAIGN_EXTRAS = ("faults",)
#: Stands for "the release the harness pins" in ids.
PINNED = "pinned"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def _release_id(release: str) -> str:
    """A release as an id part; one that needs its characters changed (``^6.1``, ``~6.1``) gets a short hash of
    itself too, so two releases never share an id."""
    safe = _safe(release)
    return safe if safe == release else f"{safe}-{hashlib.sha256(release.encode()).hexdigest()[:6]}"


@dataclass(frozen=True)
class Cell:
    driver: Driver
    #: As ``harness run --target`` takes it: ``embedded``, ``mongo-java-server=1.47.0``,
    #: ``testcontainers=mongo:8.0``, ``uri=...``.
    target: str
    #: The SecantusDB release to install; ``None``: the one the harness's pins resolve to.
    secantusdb: str | None = None
    #: Whether each repeat also runs the matrix's campaign (on SecantusDB targets only: see steps.py).
    campaign: bool = False
    #: The run's ``--iteration-mode`` (None: the driver's default, no flag): the matrix's ``iteration_modes`` axis.
    iteration_mode: str | None = None

    @property
    def target_name(self) -> str:
        return self.target.partition("=")[0]

    @property
    def secantus_target(self) -> bool:
        """Whether the target is SecantusDB, whose release is the one installed in the cell's environment."""
        return catalogue.is_secantus(self.target_name)

    @property
    def pymongo(self) -> str | None:
        """The pymongo release the cell installs: the driver's, for the drivers whose release is the environment's
        (None: the pinned one)."""
        return self.driver.release if self.driver.package is not None else None

    @property
    def driver_argument(self) -> str:
        """What ``harness run --driver`` takes: a Python driver's release is the environment's; the others are
        built by the harness at the release named (``node@6.10.0``)."""
        return self.driver.name if self.driver.package is not None else str(self.driver)

    @property
    def id(self) -> str:
        name, _, argument = self.target.partition("=")
        if name == "uri":
            target = f"uri-{hashlib.sha256(argument.encode()).hexdigest()[:10]}"
        else:
            target = _safe(self.target.replace("=", "-"))
        release = f"__secantusdb-{self.secantusdb or PINNED}" if self.secantus_target else ""
        driver = _release_id(self.driver.release) if self.driver.release else PINNED
        mode = f"__mode-{self.iteration_mode}" if self.iteration_mode else ""
        return f"{self.driver.name}-{driver}__{target}{release}{mode}"

    @property
    def extras(self) -> tuple[str, ...]:
        """Extras of the harness the cell's environment installs (not part of the id)."""
        entry = catalogue.target(self.target_name)
        return (entry.extras if entry is not None else ()) + (CAMPAIGN_EXTRAS if self.campaign else ())

    @property
    def requirements(self) -> tuple[str, ...]:
        """What the cell's environment installs besides the harness itself."""
        pins = [f"pymongo=={self.pymongo}"] if self.pymongo is not None else []
        if self.secantusdb is not None:
            pins.append(f"secantusdb=={self.secantusdb}")
        return tuple(pins)

    def labels(self, matrix_id: str) -> dict[str, Any]:
        """The cell's provenance: the labels every record of it carries (``repeat`` is added per run)."""
        labels = {"matrix": matrix_id, "cell": self.id, "driver": str(self.driver), "target": redact_uri(self.target)}
        if self.pymongo is not None:
            labels["pymongo"] = self.pymongo
        if self.secantusdb is not None:
            labels["secantusdb"] = self.secantusdb
        return {**labels, **self._mode()}

    def requested(self) -> dict[str, Any]:
        return {
            "driver": self.driver.name,
            "driver_release": self.driver.release,
            "pymongo": self.pymongo,
            "target": redact_uri(self.target),
            "secantusdb": self.secantusdb,
            **self._mode(),
        }

    def planned(self, matrix_id: str, repeats: int) -> dict[str, Any]:
        """The cell as ``harness matrix plan`` writes it: one entry of a CI job matrix's ``include`` list."""
        return {
            "cell": self.id,
            "matrix": matrix_id,
            "driver": str(self.driver),
            "target": redact_uri(self.target),
            "secantusdb": self.secantusdb,
            **self._mode(),
            "repeats": repeats,
        }

    def _mode(self) -> dict[str, str]:
        """The cell's iteration mode, when the matrix has that axis (a cell without one is written as before)."""
        return {} if self.iteration_mode is None else {"iteration_mode": self.iteration_mode}


def expand(definition: MatrixDefinition) -> list[Cell]:
    """Every cell, drivers outermost, then iteration modes, in a stable order (the manifest, the plan and the summary
    follow it)."""
    targets: list[tuple[str, str | None]] = []
    for target in definition.targets:
        if catalogue.is_secantus(target.partition("=")[0]):
            targets += [(target, release) for release in definition.secantusdb]
        else:
            targets.append((target, None))
    targets += [(server, None) for server in definition.servers]
    return [
        Cell(
            driver=driver,
            target=target,
            secantusdb=release,
            campaign=definition.campaign is not None and catalogue.is_secantus(target.partition("=")[0]),
            iteration_mode=mode,
        )
        for driver, mode, (target, release) in product(
            definition.drivers, definition.iteration_modes or (None,), targets
        )
    ]
