"""Test-runner operations that arm reply shaping in a scenario (object ``testRunner``).

:data:`OPERATIONS` holds them by name; :mod:`faults.failpoints.plugin` registers them with the engine:

``shapeReplies``
    ``{profile?: NAME, shapings?: {NAME: value, ...}, appName?: STRING}``: from now
    on, the wire proxy reshapes the replies of change-stream cursors (docs/wire-proxy.md,
    "Reply shaping"). A profile and shapings merge. Arming again replaces what was armed.
``clearReplyShaping``
    no arguments: shaping off (documents already held back are still served).

Both act on the shaping owner of the wire proxy in the test's path: the run's
(``--failpoints emulated``, or a target that refuses fail points), or else one
started for this test alone by the driver route :func:`harness.shared.wire.shaping_route.route_for`.
A shaping that makes the server (or a connection) claim a wire version below the
oldest the driver under test supports makes the test ``skipped`` with that reason
(the adapter's ``min_wire_version``): rules for servers a driver does not support
do not apply to it, and the driver would refuse the server anyway.
Run with no proxy at all (called directly), they fail the test as a harness
error that says so. Every shaping armed is in the record's
``details.reply_shaping``, with the note that it emulates an older server.
"""

from __future__ import annotations

from typing import Any

from harness.core.errors import HarnessError, TestSkipped
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.core.ports import DriverAdapter
from harness.shared.wire.shaping import ShapingConfig, ShapingConfigError
from harness.shared.wire.shaping_owner import ReplyShapingOwner, owner_for

SHAPE_REPLIES, CLEAR_REPLY_SHAPING = "shapeReplies", "clearReplyShaping"
OPERATION_NAMES = (SHAPE_REPLIES, CLEAR_REPLY_SHAPING)
NO_PROXY = (
    "needs the wire proxy between the driver under test and the target; run with --failpoints emulated "
    "(the proxy then carries every test) or on a target that refuses fail points"
)


def _owner(context: Any, operation: Operation) -> ReplyShapingOwner:
    owner = owner_for(context.target)
    if owner is None:
        raise HarnessError(f"{operation.label or operation.name}: {operation.name}: {NO_PROXY}")
    return owner


def unsupported_wire_version(driver: DriverAdapter, config: ShapingConfig) -> str | None:
    """Why the driver cannot take part (a wire version below its oldest supported one), or None."""
    least = driver.min_wire_version
    claimed = [v for v in (config.max_wire_version, config.handshake_max_wire_version) if v is not None]
    if least is None or not claimed or min(claimed) >= least:
        return None
    return (
        f"the shaped replies claim wire version {min(claimed)}, and {driver.name} "
        f"{driver.version} supports no server below wire version {least}: rules for such "
        f"servers do not apply to it"
    )


def shape_replies(context: Any, operation: Operation) -> None:
    where = operation.label or SHAPE_REPLIES
    owner = _owner(context, operation)
    try:
        config = ShapingConfig.parse(dict(operation.arguments))
    except ShapingConfigError as exc:
        raise HarnessError(f"{where}: shapeReplies: {exc}") from exc
    reason = unsupported_wire_version(context.driver, config)
    if reason is not None:
        raise TestSkipped(f"{where}: shapeReplies: {reason}")
    with context.guarded():  # a torn-down test must not leave shaping for the next one
        owner.arm(config)
    owner.attach(context.details)


def clear_reply_shaping(context: Any, operation: Operation) -> None:
    if operation.arguments:
        raise HarnessError(
            f"{operation.label or CLEAR_REPLY_SHAPING}: clearReplyShaping takes no arguments, "
            f"got {sorted(operation.arguments)}"
        )
    owner = _owner(context, operation)
    owner.clear()
    owner.attach(context.details)


def uses_reply_shaping(test: SpecTest) -> bool:
    return any(op.object == TEST_RUNNER and op.name in OPERATION_NAMES for op in test.operations)


OPERATIONS = {SHAPE_REPLIES: shape_replies, CLEAR_REPLY_SHAPING: clear_reply_shaping}
