"""Connection strings: one parser for every URI the harness handles.

Targets, the matrix definition, the wire proxy and the network-fault proxies
all need to take a connection string apart (the first host, the URI cut to one
host, the URI pointed at a proxy, the URI with its password hidden). Doing
that by hand in each place (split on the scheme separator, then on the last
colon) went wrong: ``mongodb://u:p@127.0.0.1:5000/`` came out as host
``u:p@127.0.0.1``. Every
such question is answered here instead, on top of pymongo's own host and
userinfo parsing (``pymongo.uri_parser.split_hosts`` / ``parse_userinfo``), so
the harness reads a connection string the way the driver does. Hiding its
secrets is :mod:`harness.core.credentials`' job (:func:`redact` calls it).

Nothing here touches the network: a ``mongodb+srv://`` URI names a DNS record,
not hosts, so it is never resolved; functions that need explicit hosts refuse
it with a :class:`ConnectionStringError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode

from pymongo.errors import PyMongoError
from pymongo.uri_parser import parse_userinfo, split_hosts

from harness.core.credentials import redact_text

SCHEME = "mongodb"
SRV_SCHEME = "mongodb+srv"
DEFAULT_PORT = 27017

__all__ = [
    "DEFAULT_PORT",
    "SCHEME",
    "SRV_SCHEME",
    "ConnectionStringError",
    "ParsedUri",
    "first_host",
    "parse",
    "redact",
    "redact_text",
    "single_host_uri",
    "validate",
    "with_single_host",
]


class ConnectionStringError(ValueError):
    """A connection string the harness cannot use; the message names it (password hidden) and says why."""


@dataclass(frozen=True)
class ParsedUri:
    """A connection string taken apart, without resolving anything.

    ``credentials`` is the raw (still percent-encoded) text before ``@``;
    ``hosts`` are ``host:port`` strings (port 27017 when the URI leaves it out,
    IPv6 literals in brackets; an SRV name has no port); ``path`` is the text
    between the hosts and ``?`` (the database, possibly empty); ``options`` are
    the query pairs in their order and spelling, blank values kept.
    """

    scheme: str
    credentials: str
    hosts: tuple[str, ...]
    path: str
    options: tuple[tuple[str, str], ...]

    @property
    def is_srv(self) -> bool:
        return self.scheme == SRV_SCHEME

    def option(self, name: str, default: str | None = None) -> str | None:
        """The last value given for ``name``, compared case-insensitively as the driver does."""
        found = default
        for key, value in self.options:
            if key.lower() == name.lower():
                found = value
        return found

    def replace(
        self, *, hosts: tuple[str, ...] | None = None, options: tuple[tuple[str, str], ...] | None = None
    ) -> ParsedUri:
        return ParsedUri(
            self.scheme,
            self.credentials,
            self.hosts if hosts is None else tuple(hosts),
            self.path,
            self.options if options is None else tuple(options),
        )

    def unparse(self) -> str:
        """Back to a connection string (options re-encoded as the driver decodes them)."""
        prefix = f"{self.credentials}@" if self.credentials else ""
        query = f"?{urlencode(self.options)}" if self.options else ""
        return f"{self.scheme}://{prefix}{','.join(self.hosts)}/{self.path}{query}"

    def __str__(self) -> str:
        return redact(self.unparse())


def _fail(uri: str, reason: object) -> ConnectionStringError:
    return ConnectionStringError(f"bad connection string {redact(str(uri))!r}: {redact_text(str(reason))}")


def _split(uri: str) -> tuple[str, str, str, str, str]:
    """``(scheme, userinfo, hosts text, path, query text)``, split as pymongo's parse_uri does."""
    if not isinstance(uri, str):
        raise _fail(repr(uri), "not a string")
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in (SCHEME, SRV_SCHEME):
        raise _fail(uri, f"must begin with {SCHEME}:// or {SRV_SCHEME}://")
    authority, _, path_part = rest.partition("/")
    if not path_part and "?" in authority:
        raise _fail(uri, "a '/' is required between the host list and any options")
    path, _, query = path_part.partition("?")
    userinfo, _, hosts = authority.rpartition("@")
    if not hosts:
        raise _fail(uri, "no host")
    return scheme, userinfo, hosts, path, query


def _format_host(host: str, port: int | None) -> str:
    if host.endswith(".sock"):
        return quote(host, safe="")
    if ":" in host:
        host = f"[{host}]"
    return host if port is None else f"{host}:{port}"


def _hosts(uri: str, text: str, srv: bool) -> tuple[str, ...]:
    try:
        nodes = split_hosts(text, default_port=None if srv else DEFAULT_PORT)
    except (PyMongoError, ValueError) as exc:
        raise _fail(uri, exc) from None
    if srv and (len(nodes) != 1 or nodes[0][1] is not None):
        raise _fail(uri, f"{SRV_SCHEME}:// names exactly one host name and no port")
    return tuple(_format_host(host, port) for host, port in nodes)


def parse(uri: str) -> ParsedUri:
    """Take ``uri`` apart; a ``mongodb+srv://`` URI keeps its one SRV name (nothing is resolved)."""
    scheme, userinfo, hosts, path, query = _split(uri)
    if userinfo:
        try:
            parse_userinfo(userinfo)
        except (PyMongoError, ValueError) as exc:
            raise _fail(uri, exc) from None
    return ParsedUri(
        scheme,
        userinfo,
        _hosts(uri, hosts, scheme == SRV_SCHEME),
        path,
        tuple(parse_qsl(query, keep_blank_values=True)),
    )


def _explicit(uri: str, why: str) -> ParsedUri:
    parsed = parse(uri)
    if parsed.is_srv:
        raise _fail(uri, f"{why} needs explicit hosts; an SRV record names them only through DNS")
    return parsed


def first_host(uri: str) -> tuple[str, int]:
    """``(host, port)`` of the first host, as a socket takes it (IPv6 without brackets)."""
    parsed = _explicit(uri, "finding the first host")
    host, port = split_hosts(parsed.hosts[0])[0]
    if port is None:  # a Unix domain socket
        raise _fail(uri, "the first host is a Unix domain socket, not host:port")
    return host, port


def single_host_uri(uri: str) -> str:
    """``uri`` cut down to its first host, credentials, database and options kept as written.

    A URI with one host, or an SRV URI (its hosts come from DNS), comes back unchanged.
    """
    scheme, userinfo, _hosts_text, path, query = _split(uri)
    parsed = parse(uri)
    if parsed.is_srv or len(parsed.hosts) <= 1:
        return uri
    prefix = f"{userinfo}@" if userinfo else ""
    return f"{scheme}://{prefix}{parsed.hosts[0]}/{path}" + (f"?{query}" if query else "")


def with_single_host(uri: str, listen: str, direct: bool = True) -> str:
    """``uri`` with its host list replaced by ``listen`` (a proxy's ``host:port``).

    With ``direct``, ``directConnection=true`` replaces any directConnection
    the URI had, so the driver stays on ``listen`` instead of discovering the
    real members from ``hello``; a ``loadBalanced=true`` URI does no discovery
    and may not combine with directConnection, so it keeps its options.
    """
    parsed = _explicit(uri, "pointing at another host")
    host = _hosts(listen, listen, srv=False)
    if len(host) != 1:
        raise _fail(listen, "a single host:port is needed to stand in for the target")
    options = parsed.options
    if direct and (parsed.option("loadBalanced") or "").lower() != "true":
        kept = tuple((k, v) for k, v in options if k.lower() != "directconnection")
        options = (*kept, ("directConnection", "true"))
    return parsed.replace(hosts=host, options=options).unparse()


def redact(uri: str) -> str:
    """``uri`` with every secret hidden (the password, and the values of the sensitive options); safe for result
    files, labels and messages.

    A thin front for one connection string over the project's one redaction
    (:func:`harness.core.credentials.redact_text`): purely textual, so it also works on strings that do not parse.
    """
    return redact_text(str(uri))


def validate(uri: str) -> ParsedUri:
    """:func:`parse`, plus pymongo's checks of the options, still without DNS.

    A ``mongodb://`` URI goes through ``pymongo.uri_parser.parse_uri`` in full
    (which resolves nothing for that scheme); an SRV URI gets only the option
    checks, since its full parse would look up the record.
    """
    parsed = parse(uri)
    try:
        if parsed.is_srv:
            from pymongo.uri_parser import split_options

            _, _, _, _, query = _split(uri)
            if query:
                split_options(query)
        else:
            from pymongo.uri_parser import parse_uri

            parse_uri(uri)
    except (PyMongoError, ValueError) as exc:
        raise _fail(uri, exc) from None
    return parsed
