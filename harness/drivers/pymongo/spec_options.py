"""Spec-shaped option documents -> pymongo objects (read/write concern, read preference)."""

from __future__ import annotations

from typing import Any

from pymongo import ReadPreference
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from harness.core.ports import DriverLacksFeature, UnsupportedOperation


def read_preference_from_spec(spec: dict[str, Any]) -> Any:
    mode = spec.get("mode", "primary")
    modes = {
        "primary": ReadPreference.PRIMARY,
        "primaryPreferred": ReadPreference.PRIMARY_PREFERRED,
        "secondary": ReadPreference.SECONDARY,
        "secondaryPreferred": ReadPreference.SECONDARY_PREFERRED,
        "nearest": ReadPreference.NEAREST,
    }
    if mode not in modes:
        raise UnsupportedOperation(f"unknown read preference mode {mode!r}")
    return modes[mode]


def collection_options(spec: dict[str, Any] | None) -> dict[str, Any]:
    """``databaseOptions``/``collectionOptions`` -> pymongo keyword arguments."""
    options: dict[str, Any] = {}
    for key, value in (spec or {}).items():
        if key == "readConcern":
            options["read_concern"] = ReadConcern(**value)
        elif key == "writeConcern":
            options["write_concern"] = WriteConcern(**value)
        elif key == "readPreference":
            options["read_preference"] = read_preference_from_spec(value)
        else:
            raise DriverLacksFeature(f"unsupported database/collection option {key!r}")
    return options
