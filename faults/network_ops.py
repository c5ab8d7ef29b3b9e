"""Test-runner operations that put network faults into a scenario (object ``testRunner``).

Importing this module registers them with :func:`harness.runner.test_runner_operation`:

``networkFault``
    exactly one of
    ``{toxic: {type, stream?, attributes?, toxicity?, name?}}`` - install a toxic;
    ``{proxy: "down" | "up"}`` - take the proxy down (connections closed,
    connection refused) or bring it back on the same address;
    ``{removeToxic: <name>}`` - remove one toxic (names default to ``<type>_<stream>``);
    plus, optionally, ``proxyName`` when the run has more than one proxy.
``clearNetworkFaults``
    no arguments: remove every toxic, bring every proxy up, and check with
    the server that nothing is left.

They act on ``context.runner.network_faults`` (a :class:`~faults.network.NetworkFaults`),
which the session sets when the run has ``--network-faults``; without it
they fail the test as a harness error that says so. docs/network-faults.md
is the reference.
"""

from __future__ import annotations

from typing import Any

from faults.network import NetworkFaultError, NetworkFaults, Toxic
from harness.model import TEST_RUNNER, Operation, SpecTest
from harness.runner import HarnessError, TestContext, test_runner_operation

NO_NETWORK_FAULTS = "network faults need --network-faults / a Toxiproxy server"
OPERATION_NAMES = ("networkFault", "clearNetworkFaults")
_FORMS = ("toxic", "proxy", "removeToxic")


def uses_network_faults(test: SpecTest) -> bool:
    """Whether a test schedules network faults: a run without them can skip it with :data:`NO_NETWORK_FAULTS`."""
    return any(op.object == TEST_RUNNER and op.name in OPERATION_NAMES for op in test.operations)


def network_faults_of(context: TestContext, operation: Operation) -> NetworkFaults:
    faults = getattr(context.runner, "network_faults", None)
    if faults is None:
        raise HarnessError(f"{operation.label or operation.name}: {operation.name}: {NO_NETWORK_FAULTS}")
    return faults


@test_runner_operation("networkFault")
def network_fault(context: TestContext, operation: Operation) -> None:
    where = operation.label or "networkFault"
    arguments = dict(operation.arguments)
    proxy_name = arguments.pop("proxyName", None)
    forms = [key for key in _FORMS if key in arguments]
    unknown = set(arguments) - set(_FORMS)
    if unknown or len(forms) != 1:
        raise HarnessError(f"{where}: networkFault takes exactly one of {list(_FORMS)} (and optionally "
                           f"proxyName); got {sorted(operation.arguments)}")
    faults = network_faults_of(context, operation)
    try:
        if forms[0] == "toxic":
            faults.add_toxic(Toxic.from_spec(arguments["toxic"]), proxy_name)
        elif forms[0] == "removeToxic":
            faults.remove_toxic(str(arguments["removeToxic"]), proxy_name)
        elif arguments["proxy"] == "down":
            faults.down(proxy_name)
        elif arguments["proxy"] == "up":
            faults.up(proxy_name)
        else:
            raise HarnessError(f"{where}: proxy must be \"down\" or \"up\", got {arguments['proxy']!r}")
    except NetworkFaultError as exc:
        raise HarnessError(f"{where}: {exc}") from exc


@test_runner_operation("clearNetworkFaults")
def clear_network_faults(context: TestContext, operation: Operation) -> None:
    if operation.arguments:
        raise HarnessError(f"{operation.label or 'clearNetworkFaults'}: clearNetworkFaults takes no arguments, "
                           f"got {sorted(operation.arguments)}")
    problems = clear_after_test(network_faults_of(context, operation))
    if problems:
        raise HarnessError(f"{operation.label or 'clearNetworkFaults'}: " + "; ".join(problems))


def clear_after_test(faults: Any) -> list[str]:
    """Reset, then ask the server; returns problems (empty when clean), like ``FailPointManager.disarm_all``.

    For the runner's teardown after every test: a toxic left on would slow or
    break every later test, so it is checked, not assumed.
    """
    try:
        faults.reset()
        return faults.leftovers()
    except NetworkFaultError as exc:
        return [f"could not clear network faults: {exc}"]
