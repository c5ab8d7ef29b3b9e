"""The matrix's axes are the catalogue's entries: a new driver or target in the plug-in table is in the matrix,
with the release axis its entry declares, and nothing in harness/matrix names one.

The Rust driver is the catalogue's newest executor: ``--driver rust,rust@VERSION`` plans cells whose runs build
the executor at the release (``harness run --driver rust@VERSION``), as the Java and Go executors' do.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.core.ports import TargetUnavailable
from harness.engine.plugins import EXECUTOR, DriverEntry, Releases, TargetEntry, load_plugins
from harness.matrix import catalogue
from harness.matrix.cells import expand
from harness.matrix.cli import add_matrix_arguments, command_matrix
from harness.matrix.definition import DefinitionError, load_definition
from tests.paths import REPO


def define(cwd: Path, *argv: str) -> Any:
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    args = parser.parse_args(list(argv))
    return load_definition(args.matrix, args, cwd)


def test_rust_and_its_releases_plan_as_the_other_built_executors(tmp_path: Path, capsys: Any) -> None:
    cells = expand(define(tmp_path, "--driver", "rust,rust@3.9.0,go@2.10.0,pymongo@4.20.0", "--target", "embedded"))
    assert [cell.id for cell in cells] == [
        "rust-pinned__embedded__secantusdb-pinned",
        "rust-3.9.0__embedded__secantusdb-pinned",
        "go-2.10.0__embedded__secantusdb-pinned",
        "pymongo-4.20.0__embedded__secantusdb-pinned",
    ]
    # A built executor's release goes to its run; pymongo's is the cell environment's.
    assert [cell.driver_argument for cell in cells] == ["rust", "rust@3.9.0", "go@2.10.0", "pymongo"]
    assert [cell.requirements for cell in cells] == [(), (), (), ("pymongo==4.20.0",)]
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    assert command_matrix(parser.parse_args(["plan", "--driver", "rust@3.9.0"])) == 0
    assert json.loads(capsys.readouterr().out)["include"][0]["driver"] == "rust@3.9.0"


def test_every_committed_matrix_file_plans(tmp_path: Path) -> None:
    files = sorted((REPO / "specs" / "matrices").glob("*.yml"))
    assert files
    for path in files:
        assert expand(define(tmp_path, "--matrix", str(path))), path


@pytest.fixture
def with_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's catalogue with a driver and a target of one's own, as one entry each would add them."""
    registry = load_plugins()
    mine = DriverEntry(
        "mine",
        "a driver of one's own",
        EXECUTOR,
        make=lambda: None,  # type: ignore[arg-type,return-value]
        releases=Releases("built from its tag", "1.2.0"),
        make_release=lambda release: None,  # type: ignore[arg-type,return-value]
    )

    def only_fast(argument: str | None) -> str | None:
        if argument not in (None, "fast"):
            raise TargetUnavailable(f"my-server takes only fast, got {argument!r}")
        return argument

    server = TargetEntry(
        "my-server",
        "a SecantusDB of one's own",
        lambda argument: None,  # type: ignore[arg-type,return-value]
        releases=registry.targets["embedded"].releases,
        matrix_argument=only_fast,
        extras=("mine",),
    )
    extended = replace(
        registry, drivers={**registry.drivers, "mine": mine}, targets={**registry.targets, "my-server": server}
    )
    monkeypatch.setattr(catalogue, "registry", lambda: extended)


def test_a_new_driver_and_target_are_matrix_axes_with_their_declared_releases(
    tmp_path: Path, with_entries: None
) -> None:
    definition = define(tmp_path, "--driver", "mine@1.3.0", "--target", "my-server=fast", "--secantusdb", "0.7.0b3")
    (cell,) = expand(definition)
    assert cell.id == "mine-1.3.0__my-server-fast__secantusdb-0.7.0b3"
    assert cell.driver_argument == "mine@1.3.0" and cell.extras == ("mine",) and cell.secantus_target
    with pytest.raises(DefinitionError, match="--target: my-server takes only fast, got 'slow'"):
        define(tmp_path, "--driver", "mine", "--target", "my-server=slow")


def test_without_the_entries_the_matrix_does_not_know_them(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="unknown driver 'mine'"):
        define(tmp_path, "--driver", "mine@1.3.0")
    with pytest.raises(DefinitionError, match="unknown target 'my-server'"):
        define(tmp_path, "--driver", "go", "--target", "my-server")
