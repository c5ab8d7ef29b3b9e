"""harness.shared.connection_strings: the one connection-string parser (pure: no DNS, no sockets)."""

from __future__ import annotations

import socket

import pytest

from harness.shared import connection_strings
from harness.shared.connection_strings import (
    ConnectionStringError,
    ParsedUri,
    first_host,
    parse,
    redact,
    with_single_host,
)
from harness.shared.wire.upstream import driver_facing_address


def test_parse_keeps_credentials_hosts_path_and_options():
    parsed = parse("mongodb://u:p@127.0.0.1:5000,[::1]:27018,db.invalid/admin?replicaSet=rs0&w=majority")
    assert parsed == ParsedUri(
        "mongodb",
        "u:p",
        ("127.0.0.1:5000", "[::1]:27018", "db.invalid:27017"),
        "admin",
        (("replicaSet", "rs0"), ("w", "majority")),
    )
    with pytest.raises(AttributeError):
        parsed.scheme = "other"  # type: ignore[misc]


def test_default_port_and_ipv6_brackets():
    assert parse("mongodb://db.invalid").hosts == ("db.invalid:27017",)
    assert parse("mongodb://[::1]/").hosts == ("[::1]:27017",)
    assert parse("mongodb://[::1]:27018/").hosts == ("[::1]:27018",)
    assert first_host("mongodb://[::1]:27018/") == ("::1", 27018)
    assert first_host("mongodb://db.invalid/") == ("db.invalid", 27017)


def test_query_order_spelling_and_blank_values_preserved():
    parsed = parse("mongodb://127.0.0.1/?w=1&appName=x&READPREFERENCE=primary&tag=&w=2")
    assert parsed.options == (("w", "1"), ("appName", "x"), ("READPREFERENCE", "primary"), ("tag", ""), ("w", "2"))
    assert parsed.option("readPreference") == "primary" and parsed.option("W") == "2"


def test_first_host_skips_credentials():
    # The bug this module fixed: hand splitting gave host "u:p@127.0.0.1".
    assert first_host("mongodb://u:p@127.0.0.1:5000/") == ("127.0.0.1", 5000)
    assert first_host("mongodb://u:p@127.0.0.1:5000,127.0.0.2:5001/db?replicaSet=rs") == ("127.0.0.1", 5000)


def test_driver_facing_address_behind_toxiproxy_uses_the_first_host():
    class FakeTarget:
        faults = object()
        uri = "mongodb://u:p@127.0.0.1:5000/?directConnection=true"

    assert driver_facing_address(FakeTarget()) == ("127.0.0.1", 5000)


def test_single_host_uri_keeps_credentials_path_and_query():
    uri = "mongodb://u:p@127.0.0.1:27017,127.0.0.2:27018/db?replicaSet=rs0&authSource=admin"
    assert connection_strings.single_host_uri(uri) == "mongodb://u:p@127.0.0.1:27017/db?replicaSet=rs0&authSource=admin"
    assert connection_strings.single_host_uri("mongodb://127.0.0.1:1,127.0.0.2") == "mongodb://127.0.0.1:1/"
    one = "mongodb://127.0.0.1:27017/?w=1"
    assert connection_strings.single_host_uri(one) == one


def test_srv_is_never_resolved(monkeypatch):
    resolver = pytest.importorskip("dns.resolver")  # pymongo's SRV resolution goes through dnspython

    def no_network(*args, **kwargs):
        raise AssertionError("a DNS lookup or socket was attempted")

    monkeypatch.setattr(resolver, "resolve", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    srv = "mongodb+srv://u:p@cluster.invalid/db?retryWrites=true"
    assert connection_strings.single_host_uri(srv) == srv
    assert parse(srv).hosts == ("cluster.invalid",) and parse(srv).is_srv
    connection_strings.validate(srv)
    with pytest.raises(ConnectionStringError, match="SRV"):
        first_host(srv)
    with pytest.raises(ConnectionStringError, match="SRV"):
        with_single_host(srv, "127.0.0.1:5000")


@pytest.mark.parametrize(
    "uri, expected",
    [
        ("mongodb://127.0.0.1:27017/", "mongodb://127.0.0.1:5000/?directConnection=true"),
        (
            "mongodb://u:p@db.invalid:27018/admin?replicaSet=rs0&directConnection=false&DIRECTCONNECTION=false",
            "mongodb://u:p@127.0.0.1:5000/admin?replicaSet=rs0&directConnection=true",
        ),
        ("mongodb://lb.invalid/?loadBalanced=true", "mongodb://127.0.0.1:5000/?loadBalanced=true"),
        (
            "mongodb://lb.invalid/?LOADBALANCED=TRUE&directConnection=false",
            "mongodb://127.0.0.1:5000/?LOADBALANCED=TRUE&directConnection=false",
        ),
    ],
)
def test_with_single_host(uri, expected):
    assert with_single_host(uri, "127.0.0.1:5000") == expected


def test_with_single_host_without_direct_leaves_options_alone():
    assert with_single_host("mongodb://db.invalid/?w=1", "[::1]:5000", direct=False) == "mongodb://[::1]:5000/?w=1"


def test_load_balanced_gets_no_direct_connection():
    out = with_single_host("mongodb://127.0.0.1:1/?loadBalanced=true", "127.0.0.1:5000")
    assert "directconnection" not in out.lower()


@pytest.mark.parametrize(
    "uri, expected",
    [
        ("mongodb://u:secret@127.0.0.1:27017/", "mongodb://u:***@127.0.0.1:27017/"),
        ("mongodb://u:se%40cr:et@127.0.0.1/db?authSource=admin", "mongodb://u:***@127.0.0.1/db?authSource=admin"),
        ("mongodb+srv://u:secret@cluster.invalid/", "mongodb+srv://u:***@cluster.invalid/"),
        ("mongodb://u:secret@127.0.0.1?w=1", "mongodb://u:***@127.0.0.1?w=1"),
        ("mongodb://onlyuser@127.0.0.1/", "mongodb://onlyuser@127.0.0.1/"),
        ("mongodb://127.0.0.1/?password=x", "mongodb://127.0.0.1/?password=x"),
        ("not a uri", "not a uri"),
    ],
)
def test_redaction(uri, expected):
    assert redact(uri) == expected
    assert connection_strings.redact(uri) == expected


@pytest.mark.parametrize(
    "bad",
    [
        "http://127.0.0.1/",
        "127.0.0.1:27017",
        "mongodb://",
        "mongodb://127.0.0.1:notaport/",
        "mongodb://127.0.0.1:99999/",
        "mongodb://127.0.0.1,,127.0.0.2/",
        "mongodb://[::1/",
        "mongodb://u:p@w@127.0.0.1/",
        "mongodb://127.0.0.1?w=1",
        "mongodb+srv://a.invalid,b.invalid/",
        "mongodb+srv://a.invalid:27017/",
    ],
)
def test_bad_input_raises_connection_string_error(bad):
    with pytest.raises(ConnectionStringError) as caught:
        parse(bad)
    assert isinstance(caught.value, ValueError)
    assert "bad connection string" in str(caught.value)


def test_error_names_the_uri_with_the_password_hidden():
    with pytest.raises(ConnectionStringError) as caught:
        first_host("mongodb://u:hunter2@127.0.0.1:notaport/")
    assert "mongodb://u:***@127.0.0.1:notaport/" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_validate_uses_pymongo_option_checks():
    connection_strings.validate("mongodb://127.0.0.1/?w=1")
    with pytest.raises(ConnectionStringError, match="nosuchoption"):
        connection_strings.validate("mongodb://127.0.0.1/?nosuchoption=1")
    with pytest.raises(ConnectionStringError, match="nosuchoption"):
        connection_strings.validate("mongodb+srv://cluster.invalid/?nosuchoption=1")
