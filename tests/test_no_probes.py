"""No ``getattr``/``hasattr`` probe of a plug-in in the engine, the shared layer or the plug-ins (issue 34).

What a plug-in can do is declared on its port (``harness/core/ports.py``: a driver's ``capabilities`` and
``restartable``, a target's ``faults``, ``inner``, ``admin_failpoints`` and ``restart_problem``), and the code asks
that, never whether an attribute happens to exist. This test reads the packages' syntax trees and fails on any call
of ``getattr`` or ``hasattr`` that :data:`ALLOWED` does not name. Each allowed call says why it is no plug-in probe:
the standard library, the driver under test's own objects (pymongo, SecantusDB), plain data, or the one question
the plug-in table asks a module the entry points name. An allowed call that is gone fails too, so the list stays
short and true.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO

#: Where plug-ins are defined or used: the engine, the layer the plug-ins share, and every plug-in family.
PACKAGES = ("harness/engine", "harness/shared", "harness/drivers", "harness/targets", "faults", "prose_tests")

_PYMONGO = "pymongo's own object (the driver under test, not a plug-in); the attribute differs by release"

#: (file, the object asked, the attribute asked) -> why it is not a probe of a plug-in.
ALLOWED: dict[tuple[str, str, str], str] = {
    ("harness/engine/child_processes.py", "os", "'waitid'"): "the standard library: os.waitid is Linux's only",
    ("harness/engine/plugins.py", "module", "'install'"): (
        "the entry-point contract itself: a plug-in module is its install(registry); a module without it is "
        "reported as a plug-in problem, not run"
    ),
    ("harness/drivers/executor/codec.py", "event", "attribute"): (
        "plain data: an ObservedEvent's (a core dataclass) fields read by the table of their wire names"
    ),
    ("harness/drivers/pymongo/adapter.py", "session", "'_transaction'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "transaction", "'state'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "getattr(transaction, 'state', None)", "'name'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "session", "'_server_session'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "server_session", "'dirty'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "session", "'_pinned_address'"): _PYMONGO,
    ("harness/drivers/pymongo/adapter.py", "value", "'end_session'"): "an entity's pymongo session, closed at the end",
    ("harness/drivers/pymongo/apm.py", "event", "'service_id'"): _PYMONGO,
    ("harness/drivers/pymongo/apm.py", "event", "'reason'"): _PYMONGO,
    ("harness/drivers/pymongo/apm.py", "event", "'server_connection_id'"): _PYMONGO,
    ("harness/drivers/pymongo/errors.py", "exc", "'details'"): _PYMONGO,
    ("harness/drivers/pymongo/errors.py", "exc", "'_error_labels'"): _PYMONGO,
    ("harness/drivers/pymongo/operations.py", "target", "method"): (
        "a pymongo Collection's method, named by the operation table beside it"
    ),
    ("harness/drivers/pymongo/stream_clock.py", "stream", "'_cursor'"): _PYMONGO,
    ("harness/drivers/pymongo/stream_clock.py", "cursor", "'_address'"): _PYMONGO,
    ("harness/drivers/pymongo/stream_clock.py", "cursor", "'_id'"): _PYMONGO,
    ("harness/drivers/pymongo/stream_clock.py", "cursor", "'_data'"): _PYMONGO,
    ("harness/targets/embedded.py", "server", "'_socket'"): (
        "SecantusDB's own server object (the server under test), whose listening socket is private"
    ),
    ("faults/network/__init__.py", "import_module(_EXPORTS[name])", "name"): (
        "the package's own lazy exports (PEP 562 __getattr__), not a plug-in"
    ),
}


def probes(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[tuple[str, str, str], list[int]]:
    """Every ``getattr``/``hasattr`` call under ``packages``: (file, object, attribute) -> the lines it is on."""
    found: dict[tuple[str, str, str], list[int]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    if node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
                        key = (path.relative_to(root).as_posix(), ast.unparse(node.args[0]), ast.unparse(node.args[1]))
                        found.setdefault(key, []).append(node.lineno)
    return found


def unexplained(found: dict[tuple[str, str, str], list[int]]) -> list[str]:
    return [
        f"{file}:{lines[0]}: getattr/hasattr({obj}, {attr})"
        for (file, obj, attr), lines in found.items()
        if (file, obj, attr) not in ALLOWED
    ]


def test_no_plugin_is_probed():
    found = probes(REPO)
    assert unexplained(found) == [], "declare the capability on the port (harness/core/ports.py) and ask it"
    stale = sorted(set(ALLOWED) - set(found))
    assert stale == [], f"allowed calls that are gone: take them off ALLOWED: {stale}"


def test_a_planted_probe_is_caught_and_an_allowed_call_is_not(tmp_path: Path):
    plugin = tmp_path / "faults" / "campaign" / "probe.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("def restartable(target):\n    return hasattr(target, 'restart_in_place')\n")
    allowed = tmp_path / "harness" / "engine" / "child_processes.py"
    allowed.parent.mkdir(parents=True)
    allowed.write_text("import os\n\nCAN_WAIT = hasattr(os, 'waitid')\n")
    found = probes(tmp_path, ("faults", "harness/engine"))
    assert unexplained(found) == ["faults/campaign/probe.py:2: getattr/hasattr(target, 'restart_in_place')"]


def runtime_checked_protocols(root: Path, packages: tuple[str, ...]) -> list[str]:
    """``isinstance`` against a ``@runtime_checkable`` protocol asks whether methods exist: a probe by another
    name. The files that declare one."""
    return [
        path.relative_to(root).as_posix()
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
        if "runtime_checkable" in path.read_text()
    ]


def test_no_protocol_is_checked_at_run_time(tmp_path: Path):
    assert runtime_checked_protocols(REPO, (*PACKAGES, "harness/core")) == []
    planted = tmp_path / "faults" / "restart.py"
    planted.parent.mkdir()
    planted.write_text(
        "from typing import Protocol, runtime_checkable\n\n\n@runtime_checkable\nclass R(Protocol): ...\n"
    )
    assert runtime_checked_protocols(tmp_path, ("faults",)) == ["faults/restart.py"]
