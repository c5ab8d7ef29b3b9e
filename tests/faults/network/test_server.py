"""Network faults as values: toxic validation and proxied connection strings (no server needed)."""

from __future__ import annotations

import pytest

from faults.network import TOXIC_ATTRIBUTES, NetworkFaultError, Toxic, proxied_uri, single_host
from faults.network.server import BINARY_ENV, ToxiproxyUnavailable, find_binary


def test_toxic_defaults_its_name_as_toxiproxy_clients_do():
    toxic = Toxic("latency", attributes={"latency": 100})
    assert toxic.name == "latency_downstream"
    assert toxic.as_api() == {
        "name": "latency_downstream",
        "type": "latency",
        "stream": "downstream",
        "toxicity": 1.0,
        "attributes": {"latency": 100},
    }


@pytest.mark.parametrize(
    "document, complaint",
    [
        ({"type": "latncy"}, "unknown toxic type"),
        ({"type": "latency", "attributes": {"latncy": 5}}, "unknown attribute"),
        ({"type": "latency", "attributes": {"latency": "5"}}, "non-negative integer"),
        ({"type": "latency", "attributes": {"latency": -1}}, "non-negative integer"),
        ({"type": "latency", "stream": "sideways"}, "stream must be"),
        ({"type": "latency", "toxicity": 3}, "toxicity must be"),
        ({"type": "latency", "colour": "red"}, "unknown key"),
        ({"attributes": {}}, "'type' is required"),
    ],
)
def test_a_toxic_toxiproxy_would_silently_misread_is_refused(document, complaint):
    with pytest.raises(NetworkFaultError, match=complaint):
        Toxic.from_spec(document)


def test_spec_numbers_become_integers():
    assert Toxic.from_spec({"type": "bandwidth", "attributes": {"rate": 10.0}}).attributes == {"rate": 10}


def test_the_attribute_table_covers_the_seven_toxics():
    assert set(TOXIC_ATTRIBUTES) == {
        "latency",
        "bandwidth",
        "slow_close",
        "timeout",
        "reset_peer",
        "slicer",
        "limit_data",
    }


@pytest.mark.parametrize(
    "uri, expected",
    [
        ("mongodb://127.0.0.1:27017/", "mongodb://127.0.0.1:5000/?directConnection=true"),
        (
            "mongodb://u:p@db.example:27018/admin?replicaSet=rs0&directConnection=false",
            "mongodb://u:p@127.0.0.1:5000/admin?replicaSet=rs0&directConnection=true",
        ),
        ("mongodb://lb.example/?loadBalanced=true", "mongodb://127.0.0.1:5000/?loadBalanced=true"),
    ],
)
def test_proxied_uri_points_at_the_proxy_and_stops_discovery(uri, expected):
    assert proxied_uri(uri, "127.0.0.1:5000") == expected


def test_single_host_adds_the_default_port_and_refuses_what_a_proxy_cannot_cover():
    assert single_host("mongodb://db.example/") == "db.example:27017"
    with pytest.raises(NetworkFaultError, match="single-host"):
        single_host("mongodb://a:1,b:2/")
    with pytest.raises(NetworkFaultError, match="SRV"):
        single_host("mongodb+srv://cluster.example/")


def test_find_binary_honours_the_environment_and_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "nope"))
    with pytest.raises(ToxiproxyUnavailable, match="not an executable"):
        find_binary()
    fake = tmp_path / "toxiproxy-server"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv(BINARY_ENV, str(fake))
    assert find_binary() == fake
