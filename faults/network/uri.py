"""Pointing a connection string at a proxy instead of the deployment behind it."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from faults.network.toxics import NetworkFaultError


def split_uri(uri: str) -> tuple[str, str, list[str], str, list[tuple[str, str]]]:
    """``mongodb://user:pw@h1,h2/db?a=b`` -> ``("mongodb", "user:pw", ["h1", "h2"], "db", [("a", "b")])``."""
    if not uri.startswith("mongodb://"):
        raise NetworkFaultError(f"network faults need a mongodb:// connection string with explicit hosts "
                                f"(an SRV record would let the driver find the real hosts), got {uri!r}")
    rest = uri[len("mongodb://"):]
    head, _, query = rest.partition("?")
    authority, _, path = head.partition("/")
    credentials, _, hosts = authority.rpartition("@")
    return "mongodb", credentials, [h for h in hosts.split(",") if h], path, parse_qsl(query, keep_blank_values=True)


def single_host(uri: str) -> str:
    """The one ``host:port`` a proxy can stand in front of (port 27017 when the URI leaves it out)."""
    _, _, hosts, _, _ = split_uri(uri)
    if len(hosts) != 1:
        raise NetworkFaultError(f"network faults support single-host targets; {uri!r} names {len(hosts)} hosts "
                                "(the driver would reach the others without the proxy)")
    host = hosts[0]
    return host if host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]") else f"{host}:27017"


def proxied_uri(uri: str, listen: str) -> str:
    """``uri`` with its host replaced by the proxy's ``listen`` address, and ``directConnection=true``.

    Direct connection matters: a replica-set member's ``hello`` reply names its
    real address (``hosts``, ``me``); a driver doing discovery would switch to
    that address and every fault would miss it. Load-balanced URIs already do
    no discovery (and may not combine with ``directConnection``), so they keep
    their options.
    """
    scheme, credentials, hosts, path, options = split_uri(uri)
    single_host(uri)  # refuses multi-host URIs with a reason
    lowered = {k.lower(): v for k, v in options}
    if lowered.get("loadbalanced", "").lower() != "true":
        options = [(k, v) for k, v in options if k.lower() != "directconnection"] + [("directConnection", "true")]
    prefix = f"{credentials}@" if credentials else ""
    query = f"?{urlencode(options)}" if options else ""
    return f"{scheme}://{prefix}{listen}/{path}{query}"
