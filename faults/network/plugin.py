"""Plug-in: network faults through a real Toxiproxy server (``--network-faults``).

What it adds to a run, all through its ``install``:

- a target wrapper: with ``--network-faults``, drivers reach the target only
  through a Toxiproxy proxy (:class:`~faults.network.target.ThroughToxiproxy`);
- the test-runner operations ``networkFault`` and ``clearNetworkFaults``
  (:mod:`faults.network.ops`);
- a skip rule: without Toxiproxy in the path, a test that schedules network
  faults is ``skipped`` with the reason;
- a teardown check: after every test, every toxic is removed and every proxy
  is up, confirmed by the server.

Nothing here imports Toxiproxy code until a run asks for network faults.
"""

from __future__ import annotations

from typing import Any

from faults.network.ops import NO_NETWORK_FAULTS, OPERATIONS, clear_after_test, uses_network_faults


def through_toxiproxy(target: Any, options: Any) -> Any:
    if not options.network_faults:
        return target
    from faults.network.target import ThroughToxiproxy

    return ThroughToxiproxy(target)


def without_network_faults(test: Any, target: Any) -> str | None:
    if target.faults is None and uses_network_faults(test):
        return f"uses networkFault: {NO_NETWORK_FAULTS}"
    return None


def clear_network_faults(target: Any) -> list[str]:
    faults = target.faults
    if faults is None:
        return []
    return clear_after_test(faults)


def install(registry: Any) -> None:
    registry.add_target_wrapper(through_toxiproxy)
    registry.add_skip_rule(without_network_faults)
    registry.add_teardown_check(clear_network_faults)
    for name, operation in OPERATIONS.items():
        registry.add_operation(name, operation)
