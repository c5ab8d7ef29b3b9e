"""Before a cell's repeats: build its driver, start its target once, and say whether the two can work together.

Run by the cell's own interpreter (``python -m harness.matrix.probe --driver D
--target T OUT``), so it sees exactly what the repeats will: the pymongo and
SecantusDB releases of the environment, and the Node, Java or Go executor the
harness builds (on first use, into its cache) for the release the cell names.
It writes one JSON document to ``OUT``:

``driver``
    ``name``, ``version``, ``language``, ``executor``, ``min_wire_version``: what the driver says it is;
``target``
    ``name``, ``version``, ``topology``, ``max_wire_version``, ``release`` (a package's or a library's):
    what started; ``probed: false`` for real servers, which the harness does not start (the safety guard
    decides whether a run may reach them);
``incompatible``
    why the pair cannot work (the driver refuses the target's wire version), or null;
``failure``
    ``{"stage": "driver"|"target", "reason": ...}`` when the driver could not be built or started, or the
    target could not start: the cell cannot run, and the reason says why.

Exit 0 whenever the document was written (its content is the verdict); anything
else is a crash of the probe itself, which the matrix records with its stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.core.ports import DriverAdapter, TargetInfo, TargetUnavailable, WireVersionRefused
from harness.drivers.executor.adapter import ExecutorAdapter
from harness.engine import child_processes
from harness.engine.plugins import load_plugins
from harness.engine.run import pair_incompatibility
from harness.matrix import catalogue
from harness.matrix.files import atomic_write_json


def _driver(adapter: DriverAdapter) -> dict[str, Any]:
    return {
        "name": adapter.name,
        "version": adapter.version,
        "language": adapter.language,
        "executor": adapter.executor,
        "min_wire_version": adapter.min_wire_version,
    }


def _target(info: TargetInfo) -> dict[str, Any]:
    return {
        "probed": True,
        "name": info.name,
        "version": info.version,
        "topology": info.topology,
        "max_wire_version": info.max_wire_version,
        "release": info.details.get("package_version") or info.details.get("release"),
    }


def probe(driver: str, target: str) -> dict[str, Any]:
    """The document described above."""
    plugins = load_plugins()
    outcome: dict[str, Any] = {"driver": None, "target": None, "incompatible": None, "failure": None}
    try:
        adapter = plugins.make_driver(driver)
    except Exception as exc:  # a build (npm, Maven, go) that failed, a release that does not exist
        outcome["failure"] = {"stage": "driver", "reason": f"{type(exc).__name__}: {exc}"}
        return outcome
    try:
        return _with_driver(plugins, adapter, target, outcome)
    finally:
        if isinstance(adapter, ExecutorAdapter):
            adapter.close()


def _with_driver(plugins: Any, adapter: DriverAdapter, target: str, outcome: dict[str, Any]) -> dict[str, Any]:
    outcome["driver"] = _driver(adapter)
    if isinstance(adapter, ExecutorAdapter) and adapter.start_failure:  # it says so instead of raising
        outcome["failure"] = {"stage": "driver", "reason": adapter.start_failure}
        return outcome
    if catalogue.is_server(target.partition("=")[0]):  # a real server is reached by the runs only
        outcome["target"] = {"probed": False, "name": target.partition("=")[0]}
        return outcome
    try:
        server = plugins.make_target(target)
    except TargetUnavailable as exc:
        outcome["failure"] = {"stage": "target", "reason": str(exc)}
        return outcome
    try:
        info = server.start()
        outcome["target"] = _target(info)
        outcome["incompatible"] = pair_incompatibility(adapter, info)
    except WireVersionRefused as exc:
        if outcome["driver"]["language"] == "python":  # the harness's own client is the driver under test
            outcome["incompatible"] = str(exc)
        else:
            outcome["failure"] = {"stage": "target", "reason": str(exc)}
    except TargetUnavailable as exc:
        outcome["failure"] = {"stage": "target", "reason": str(exc)}
    finally:
        server.stop()
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.matrix.probe", description=__doc__.splitlines()[0])
    parser.add_argument("--driver", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    child_processes.ensure_lifeline()  # an executor or a server started here ends with this process
    atomic_write_json(args.out, probe(args.driver, args.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
