"""Test-runner operations that put network faults into a scenario (object ``testRunner``).

:data:`OPERATIONS` holds them by name; the network plug-in
(:mod:`faults.network.plugin`) registers them with the engine:

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

They act on the faults of the run's target (a :class:`~faults.network.NetworkFaults`,
``target.faults``), which exists when the run has ``--network-faults``; without it
they fail the test as a harness error that says so. docs/network-faults.md
is the reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from faults.network.toxics import NetworkFaultError, Toxic
from harness.core.errors import HarnessError
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.engine.spec_context import SpecContext

if TYPE_CHECKING:  # the Toxiproxy client (requests) is imported only when a run has network faults
    from faults.network.faults import NetworkFaults

NO_NETWORK_FAULTS = "network faults need --network-faults / a Toxiproxy server"
OPERATION_NAMES = ("networkFault", "clearNetworkFaults")


def uses_network_faults(test: SpecTest) -> bool:
    """Whether a test schedules network faults: a run without them can skip it with :data:`NO_NETWORK_FAULTS`."""
    return any(op.object == TEST_RUNNER and op.name in OPERATION_NAMES for op in test.operations)


def network_faults_of(context: SpecContext, operation: Operation) -> NetworkFaults:
    faults = context.target.faults
    if faults is None:
        raise HarnessError(f"{operation.label or operation.name}: {operation.name}: {NO_NETWORK_FAULTS}")
    return faults


def _set_proxy(faults: NetworkFaults, state: Any, proxy_name: str | None) -> None:
    actions = {"down": faults.down, "up": faults.up}
    if state not in actions:
        raise NetworkFaultError(f'proxy must be "down" or "up", got {state!r}')
    actions[state](proxy_name)


#: networkFault's argument forms -> what each does to the proxies.
_FORMS: dict[str, Any] = {
    "toxic": lambda faults, value, proxy_name: faults.add_toxic(Toxic.from_spec(value), proxy_name),
    "removeToxic": lambda faults, value, proxy_name: faults.remove_toxic(str(value), proxy_name),
    "proxy": _set_proxy,
}


def network_fault(context: SpecContext, operation: Operation) -> None:
    where = operation.label or "networkFault"
    arguments = dict(operation.arguments)
    proxy_name = arguments.pop("proxyName", None)
    forms = [key for key in _FORMS if key in arguments]
    unknown = set(arguments) - set(_FORMS)
    if unknown or len(forms) != 1:
        raise HarnessError(
            f"{where}: networkFault takes exactly one of {list(_FORMS)} (and optionally "
            f"proxyName); got {sorted(operation.arguments)}"
        )
    faults = network_faults_of(context, operation)
    try:
        with context.guarded():  # a torn-down test must not leave a fault for the next one
            _FORMS[forms[0]](faults, arguments[forms[0]], proxy_name)
    except NetworkFaultError as exc:
        raise HarnessError(f"{where}: {exc}") from exc


def clear_network_faults(context: SpecContext, operation: Operation) -> None:
    if operation.arguments:
        raise HarnessError(
            f"{operation.label or 'clearNetworkFaults'}: clearNetworkFaults takes no arguments, "
            f"got {sorted(operation.arguments)}"
        )
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
    except Exception as exc:
        return [f"could not clear network faults: {type(exc).__name__}: {exc}"]


#: The operations by their spec names (:data:`OPERATION_NAMES`).
OPERATIONS = {"networkFault": network_fault, "clearNetworkFaults": clear_network_faults}
