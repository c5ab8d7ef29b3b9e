"""A network fault as a value: :class:`Toxic` (what, which direction, how often).

Toxiproxy accepts any attribute name and silently ignores the ones a toxic
does not have, and takes any ``toxicity``, so a typo such as ``latncy: 500``
would install a toxic that does nothing and a test that proves nothing. The
table below is what the pinned server (v2.12.0, ``toxics/*.go``) actually
reads; a :class:`Toxic` is checked against it before it is sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class NetworkFaultError(Exception):
    """A network fault could not be described, installed or removed (the message says which and why)."""


STREAMS = ("upstream", "downstream")  # upstream: driver -> server; downstream: server -> driver

#: toxic type -> {attribute: what it means}. Every attribute is an integer.
TOXIC_ATTRIBUTES: dict[str, dict[str, str]] = {
    "latency": {"latency": "delay added to each chunk, ms", "jitter": "random +/- on the delay, ms"},
    "bandwidth": {"rate": "throughput cap, KB/s"},
    "slow_close": {"delay": "delay before the connection is closed, ms"},
    "timeout": {"timeout": "stop all data, close after this many ms (0: never close)"},
    "reset_peer": {"timeout": "send TCP RST this many ms after data arrives (0: at once)"},
    "slicer": {
        "average_size": "mean chunk size, bytes",
        "size_variation": "+/- on the size, bytes",
        "delay": "pause between chunks, microseconds",
    },
    "limit_data": {"bytes": "close the connection after this many bytes"},
}


@dataclass(frozen=True)
class Toxic:
    """One toxic for one proxy; ``name`` defaults to ``<type>_<stream>`` as Toxiproxy's own clients do."""

    type: str
    stream: str = "downstream"
    attributes: dict[str, int] = field(default_factory=dict)
    toxicity: float = 1.0
    name: str = ""

    def __post_init__(self) -> None:
        known = TOXIC_ATTRIBUTES.get(self.type)
        if known is None:
            raise NetworkFaultError(f"unknown toxic type {self.type!r}; known: {sorted(TOXIC_ATTRIBUTES)}")
        if self.stream not in STREAMS:
            raise NetworkFaultError(f"toxic {self.type!r}: stream must be one of {STREAMS}, got {self.stream!r}")
        unknown = set(self.attributes) - set(known)
        if unknown:
            raise NetworkFaultError(
                f"toxic {self.type!r}: unknown attribute(s) {sorted(unknown)}; {self.type} takes {sorted(known)}"
            )
        for key, value in self.attributes.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetworkFaultError(
                    f"toxic {self.type!r}: attribute {key!r} must be a non-negative "
                    f"integer ({known[key]}), got {value!r}"
                )
        if (
            isinstance(self.toxicity, bool)
            or not isinstance(self.toxicity, (int, float))
            or not 0.0 <= self.toxicity <= 1.0
        ):
            raise NetworkFaultError(f"toxic {self.type!r}: toxicity must be a number in [0, 1], got {self.toxicity!r}")
        if not self.name:
            object.__setattr__(self, "name", f"{self.type}_{self.stream}")

    @classmethod
    def from_spec(cls, document: dict[str, Any]) -> Toxic:
        """From the scenario files' shape: ``{type, stream?, attributes?, toxicity?, name?}``."""
        if not isinstance(document, dict):
            raise NetworkFaultError(f"a toxic is a document {{type, stream, attributes, toxicity}}, got {document!r}")
        unknown = set(document) - {"type", "stream", "attributes", "toxicity", "name"}
        if unknown:
            raise NetworkFaultError(f"toxic: unknown key(s) {sorted(unknown)}")
        if "type" not in document:
            raise NetworkFaultError(f"toxic: 'type' is required (one of {sorted(TOXIC_ATTRIBUTES)})")
        attributes = document.get("attributes", {})
        if not isinstance(attributes, dict):
            raise NetworkFaultError(f"toxic {document['type']!r}: attributes must be a document, got {attributes!r}")
        return cls(
            type=document["type"],
            stream=document.get("stream", "downstream"),
            attributes={k: _integer(v) for k, v in attributes.items()},
            toxicity=document.get("toxicity", 1.0),
            name=document.get("name", ""),
        )

    def as_api(self) -> dict[str, Any]:
        """The body Toxiproxy's ``POST /proxies/{proxy}/toxics`` takes."""
        return {
            "name": self.name,
            "type": self.type,
            "stream": self.stream,
            "toxicity": float(self.toxicity),
            "attributes": dict(self.attributes),
        }


def _integer(value: Any) -> Any:
    """YAML/JSON may give ``500.0`` (or a BSON Int64) for an integer; Toxiproxy's Go structs need an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if type(value).__name__ == "Int64":
        return int(value)
    return value
