"""Whether the server itself supports fail points: a server check whose failure is a finding about the target.

The unified test format has servers under test launched with test commands on, because its tests arm
``configureFailPoint``. A run on a target without them still runs those tests: ``--failpoints auto`` then
emulates fail points in a wire proxy, and a target presented as a replica set has its presenting proxy answer
them (the record's ``failpoints`` says which). That is a fair way to test drivers, but the server's own answer
should not vanish behind it. This check asks the server itself, past anything in front of it (the target's
``server_address``), with a client of its own: it arms ``failCommand`` for one ``find`` and sends that find. A
server that refuses ``configureFailPoint`` fails the check with its refusal; one that accepts it and then does
not fail the find fails it too (the fail point would be a no-op, and every test standing on it would mean
nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from harness.core.errors import HarnessError, TestFailure, TestSkipped
from harness.core.ports import FailPointError
from harness.engine.failpoint_manager import FailPointManager
from harness.shared.failpoint_backends import NativeFailPoints

if TYPE_CHECKING:
    from prose_tests.server_checks import ServerCheckContext

#: The code the probe's failCommand makes the find fail with: one no find fails with on its own, and no
#: state-change or resumable code (a driver would mark the server unknown or retry).
PROBE_ERROR_CODE = 2
#: How long the probe's own client looks for the server.
DIRECT_TIMEOUT_MS = 10_000


def server_address(target: Any) -> tuple[str, int]:
    """Where the server itself listens, beneath anything that presents it (the target says so; else its admin
    client's server)."""
    address = target.server_address() or target.admin.address
    if address is None:
        raise HarnessError("cannot tell where the target's server listens, to ask it about fail points")
    return str(address[0]), int(address[1])


def fail_points_supported(context: ServerCheckContext) -> None:
    """``configureFailPoint`` on the server itself is accepted, and the ``failCommand`` it arms fails a ``find``."""
    run, collection = context.run, context.check.collection
    if run.target.info.details.get("test_commands") is False:
        # The harness itself started this server with test commands off (an operator's shape): its refusal
        # would say how it was started, not what it supports.
        raise TestSkipped(
            "the target was started with test commands off, as its shape asks (details.test_commands: false); "
            "whether the server supports fail points is judged only on a shape that turns them on"
        )
    host, port = server_address(run.target)
    how_applied = run.failpoints.backend.name if run.failpoints is not None else "unknown"
    context.details["fail_point_probe"] = {"server": f"{host}:{port}", "run_failpoints": how_applied}
    where = f"the server at {host}:{port}, asked directly; this run's fail points are {how_applied}"
    context.current = f"configureFailPoint failCommand on {host}:{port}, then the find it names"
    direct = MongoClient(host, port, directConnection=True, serverSelectionTimeoutMS=DIRECT_TIMEOUT_MS)
    manager = FailPointManager(NativeFailPoints(direct))  # the one owner: what it armed is turned off below
    try:
        try:
            manager.arm(
                {
                    "configureFailPoint": "failCommand",
                    "mode": {"times": 1},
                    "data": {"failCommands": ["find"], "errorCode": PROBE_ERROR_CODE},
                }
            )
        except FailPointError as exc:
            raise TestFailure(
                f"SRV-TEST-FAILPOINTS: the server does not support configureFailPoint ({where}): {exc}"
            ) from exc
        code = _find_error_code(direct, collection)
    finally:
        problems = manager.disarm_all()
        direct.close()
    if problems:
        raise HarnessError(f"the probe's fail point could not be turned off: {'; '.join(problems)}")
    if code != PROBE_ERROR_CODE:
        raise TestFailure(
            "SRV-TEST-FAILPOINTS: the server accepted configureFailPoint failCommand for find, then "
            + ("answered the find" if code is None else f"failed the find with code {code}")
            + f" instead of failing it with code {PROBE_ERROR_CODE} ({where})"
        )


def _find_error_code(client: Any, collection: str) -> int | None:
    """The code the server fails one raw ``find`` with (None: it answered)."""
    from prose_tests.server_checks import DATABASE

    try:
        client[DATABASE].command("find", collection, limit=1)
    except OperationFailure as exc:
        return exc.code
    except PyMongoError as exc:
        raise HarnessError(f"the probe's find failed without a server error: {exc}") from exc
    return None


__all__ = ["PROBE_ERROR_CODE", "fail_points_supported", "server_address"]
