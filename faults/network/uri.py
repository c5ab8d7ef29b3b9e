"""Pointing a connection string at a proxy instead of the deployment behind it.

The parsing itself is :mod:`harness.shared.connection_strings` (one parser for every connection
string the harness handles); this module adds what a proxy can and cannot
cover, and reports it as a :class:`NetworkFaultError`.
"""

from __future__ import annotations

from faults.network.toxics import NetworkFaultError
from harness.shared import connection_strings


def split_uri(uri: str) -> tuple[str, str, list[str], str, list[tuple[str, str]]]:
    """``mongodb://user:pw@h1,h2/db?a=b`` -> ``("mongodb", "user:pw", ["h1:27017", "h2:27017"], "db", [("a", "b")])``.

    Hosts carry their port (27017 when left out); the parsing is :func:`harness.shared.connection_strings.parse`.
    """
    if not uri.startswith("mongodb://"):
        raise NetworkFaultError(
            f"network faults need a mongodb:// connection string with explicit hosts "
            f"(an SRV record would let the driver find the real hosts), got {connection_strings.redact(uri)!r}"
        )
    try:
        parsed = connection_strings.parse(uri)
    except connection_strings.ConnectionStringError as exc:
        raise NetworkFaultError(str(exc)) from None
    return parsed.scheme, parsed.credentials, list(parsed.hosts), parsed.path, list(parsed.options)


def single_host(uri: str) -> str:
    """The one ``host:port`` a proxy can stand in front of (port 27017 when the URI leaves it out)."""
    _, _, hosts, _, _ = split_uri(uri)
    if len(hosts) != 1:
        raise NetworkFaultError(
            f"network faults support single-host targets; {connection_strings.redact(uri)!r} names "
            f"{len(hosts)} hosts (the driver would reach the others without the proxy)"
        )
    return hosts[0]


def proxied_uri(uri: str, listen: str) -> str:
    """``uri`` with its host replaced by the proxy's ``listen`` address, and ``directConnection=true``.

    Direct connection matters: a replica-set member's ``hello`` reply names its
    real address (``hosts``, ``me``); a driver doing discovery would switch to
    that address and every fault would miss it. Load-balanced URIs already do
    no discovery (and may not combine with ``directConnection``), so they keep
    their options.
    """
    single_host(uri)  # refuses SRV and multi-host URIs with a reason
    try:
        return connection_strings.with_single_host(uri, listen, direct=True)
    except connection_strings.ConnectionStringError as exc:
        raise NetworkFaultError(str(exc)) from None
