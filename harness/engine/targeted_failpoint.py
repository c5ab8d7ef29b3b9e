"""``targetedFailPoint``: a fail point on the mongos a session is pinned to.

The unified format: the runner MUST error if the session is not pinned, and
must disable the fail point on that same mongos after the test. Where the run's
clients talk to one server only, the pinned server is that one, and the point
goes through the run's fail-point manager (native or emulated, as every other).
Otherwise a client directly connected to the pinned address (the target port's
``admin_tasks.direct_failpoints``) arms it, through a
:class:`~harness.engine.failpoint_manager.FailPointManager` of its own, which the
test's teardown turns off before the client is closed. Only a sharded
deployment pins sessions, so only ``--target uri=`` with mongoses reaches this.
"""

from __future__ import annotations

from harness.core.errors import HarnessError
from harness.core.model import Operation
from harness.core.ports import FailPointError, require_capability
from harness.engine.failpoint_manager import FailPointManager
from harness.engine.operation_table import test_runner_operation
from harness.engine.spec_context import SpecContext


def manager_for(context: SpecContext, address: tuple[str, int]) -> FailPointManager:
    """The run's manager when ``address`` is where the run's clients go; else a direct one for this test."""
    tasks = context.target.admin_tasks
    if tasks.only_server(context.driver_uri) == address:
        return context.failpoints
    managers: dict[tuple[str, int], FailPointManager] = context.direct_failpoints
    if address not in managers:
        backend = tasks.direct_failpoints(address)
        managers[address] = manager = FailPointManager(backend)
        context.details.setdefault("targeted_failpoints", []).append(backend.name)

        def close() -> list[str]:
            problems = manager.disarm_all()
            backend.close()
            return problems

        context.closers.append(close)
    return managers[address]


@test_runner_operation("targetedFailPoint")
def targeted_fail_point(context: SpecContext, operation: Operation) -> None:
    command, session = operation.arguments.get("failPoint"), operation.arguments.get("session")
    if not isinstance(command, dict) or not isinstance(session, str):
        raise HarnessError(f"{operation.label}: targetedFailPoint needs a 'failPoint' document and a 'session'")
    require_capability(context.driver, "session_pinned_address", f"{operation.label}: targetedFailPoint")
    assert context.scope is not None
    address = context.scope.session_pinned_address(session)
    if address is None:
        raise HarnessError(
            f"{operation.label}: targetedFailPoint: session {session!r} is not pinned to a server "
            "(the unified format: the runner must error)"
        )
    address = (str(address[0]), int(address[1]))
    try:
        with context.guarded():  # never after teardown: the next test would inherit the point
            manager_for(context, address).arm(command)
    except FailPointError as exc:
        raise HarnessError(f"{operation.label}: {exc}") from exc
