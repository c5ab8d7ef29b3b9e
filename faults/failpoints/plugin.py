"""Plug-in: the fail-point backends, by the modes ``--failpoints`` takes.

``native``    ``configureFailPoint`` sent to the target by the harness's admin client (recorded as
              ``emulated-by-presenting-proxy`` when the target's own presenting proxy answers it there);
``emulated``  a wire proxy (:mod:`harness.shared.wire`) in front of the target fails commands
              itself, and drivers under test connect through it;
``auto``      native when the target accepts it (probed with a harmless ``off``), else emulated.

The same proxy carries reply shaping (:mod:`harness.shared.wire.shaping`): the
``emulated`` mode makes a :class:`~harness.shared.wire.shaping_owner.ReplyShapingOwner` its
one owner, and this plug-in registers the scenario operations
``shapeReplies`` / ``clearReplyShaping`` (:mod:`harness.shared.wire.shaping_ops`), a skip
rule for shaping tests on a run without a proxy, and a teardown check that
turns shaping off and confirms it after every test.

Each mode turns a started target into a
:class:`~harness.engine.plugins.FailPointSetup`: the backend, the URI drivers
use, and what to stop when the run ends.
"""

from __future__ import annotations

from typing import Any

from harness.engine.plugins import FailPointSetup


def native(target: Any) -> FailPointSetup:
    """Fail points sent through the target's admin client, named by what answers them there: ``native`` unless the
    target says something in front of its server does (``admin_failpoints``, a presenting proxy)."""
    from harness.shared.failpoint_backends import NativeFailPoints

    answered_by = target.admin_failpoints
    return FailPointSetup(NativeFailPoints(target.admin, name=answered_by), target.uri)


def emulated(target: Any) -> FailPointSetup:
    from harness.shared.failpoint_backends import EmulatedFailPoints
    from harness.shared.wire import WireProxy
    from harness.shared.wire.shaping_owner import ReplyShapingOwner, register, unregister
    from harness.shared.wire.upstream import driver_facing_address

    host, port = driver_facing_address(target)
    proxy = WireProxy(host, port)
    proxy.start()
    owner = register(ReplyShapingOwner(proxy, target))

    def stop() -> None:
        unregister(owner)
        proxy.stop()

    return FailPointSetup(EmulatedFailPoints(proxy), proxy.uri, stop)


def auto(target: Any) -> FailPointSetup:
    setup = native(target)
    return setup if setup.backend.supported() else emulated(target)


#: ``--failpoints`` modes, in the order help lists them.
MODES = {"native": native, "emulated": emulated, "auto": auto}


def _shaping_operation(name: str) -> Any:
    def run(context: Any, operation: Any) -> Any:
        from harness.shared.wire import shaping_ops

        return shaping_ops.OPERATIONS[name](context, operation)

    run.__name__ = name
    return run


def shaping_route(test: Any, target: Any, driver_uri: str) -> Any:
    """A spec test that shapes replies gets a wire proxy in its clients' path (None: it needs none)."""
    from harness.shared.wire.shaping_route import route_for

    return route_for(test, target, driver_uri)


def clear_reply_shaping(target: Any) -> list[str]:
    from harness.shared.wire.shaping_owner import clear_after_test

    return clear_after_test(target)


#: The scenario operations that arm reply shaping (harness/shared/wire/shaping_ops.py).
SHAPING_OPERATIONS = ("shapeReplies", "clearReplyShaping")


def install(registry: Any) -> None:
    for name, mode in MODES.items():
        registry.add_failpoint_mode(name, mode)
    for name in SHAPING_OPERATIONS:
        registry.add_operation(name, _shaping_operation(name))
    # A test that shapes replies gets a wire proxy in its clients' path for its length.
    registry.add_driver_route(shaping_route)
    registry.add_teardown_check(clear_reply_shaping)
