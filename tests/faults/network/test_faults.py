"""Network faults through a real toxiproxy-server, seen by pymongo.

Skipped (with the reason) when no toxiproxy-server binary is found; CI
installs one with scripts/install-toxiproxy.sh. Every test ends by asking the
server that nothing is left behind (the ``faults`` fixture), so a leak in
any test fails that test.
"""

from __future__ import annotations

import statistics
import time

import pytest
from pymongo import MongoClient, monitoring
from pymongo.errors import ConnectionFailure, ServerSelectionTimeoutError

from faults.network import (
    TOXIC_ATTRIBUTES,
    NetworkFaults,
    NetworkFaultsLeftBehind,
    Toxic,
    ToxiproxyServer,
    ToxiproxyUnavailable,
    find_binary,
    proxied_uri,
    single_host,
)

try:
    BINARY = find_binary()
except ToxiproxyUnavailable as exc:
    pytest.skip(f"network fault tests need toxiproxy-server: {exc}", allow_module_level=True)


@pytest.fixture(scope="module")
def database_uri():
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    yield server.uri
    server.stop()


@pytest.fixture(scope="module")
def toxiproxy():
    with ToxiproxyServer() as server:
        yield server


@pytest.fixture
def faults(toxiproxy, database_uri):
    network = NetworkFaults(toxiproxy)
    network.add_proxy(single_host(database_uri), name="target")
    try:
        yield network
        network.reset()
        network.verify_clean()  # checked, not assumed: a test that leaks fails here
    finally:
        assert network.close() == []


class Commands(monitoring.CommandListener):
    def __init__(self):
        self.names = []

    def started(self, event):
        self.names.append(event.command_name)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def through(faults, database_uri, **options):
    proxy = faults.proxies["target"]
    return MongoClient(proxied_uri(database_uri, proxy.listen), **{"serverSelectionTimeoutMS": 1000, **options})


def median_ping_s(client, n=7):
    client.admin.command("ping")
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        client.admin.command("ping")
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# -- the server -----------------------------------------------------------------
def test_server_starts_answers_and_stops():
    server = ToxiproxyServer()
    with server:
        assert server.version == "2.12.0", "scripts/install-toxiproxy.sh pins v2.12.0"
        assert server.api.proxies() == {}
        process = server.process
    assert process.poll() is not None
    assert server.process is None
    server.stop()  # twice is fine


def test_a_server_that_will_not_start_is_reported_with_its_log(tmp_path):
    broken = tmp_path / "toxiproxy-server"
    broken.write_text("#!/bin/sh\necho 'cannot start: no luck today' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(ToxiproxyUnavailable, match=r"(?s)exited with status 3.*no luck today"):
        ToxiproxyServer(broken).start()


# -- pymongo through the proxy ------------------------------------------------------
def test_pymongo_works_through_the_proxy_and_latency_measurably_delays_it(faults, database_uri):
    with through(faults, database_uri) as client, MongoClient(database_uri, directConnection=True) as direct:
        client.harness_net.lat.insert_one({"_id": 1})
        assert client.harness_net.lat.find_one({"_id": 1}) == {"_id": 1}
        baseline = median_ping_s(client)
        faults.add_toxic(Toxic("latency", "downstream", {"latency": 100}))
        delayed = median_ping_s(client, n=3)
        assert delayed - baseline >= 0.09, (baseline, delayed)
        assert median_ping_s(direct, n=3) < 0.05, "the direct connection must not see the toxic"


def test_reset_peer_fails_an_operation_with_a_network_error(faults, database_uri):
    with through(faults, database_uri) as client:
        client.admin.command("ping")
        faults.add_toxic(Toxic("reset_peer", "upstream", {"timeout": 0}))
        with pytest.raises(ConnectionFailure):
            client.admin.command("ping")
        faults.remove_toxic("reset_peer_upstream")
        client.admin.command("ping")


def test_a_change_stream_resumes_through_a_reset_peer(faults, database_uri):
    listener = Commands()
    with (
        through(faults, database_uri, event_listeners=[listener]) as client,
        MongoClient(database_uri, directConnection=True) as direct,
    ):
        with client.harness_net.resets.watch(max_await_time_ms=100) as stream:
            direct.harness_net.resets.insert_one({"_id": "before"})
            faults.add_toxic(Toxic("reset_peer", "upstream", {"timeout": 0}))
            with pytest.raises(ConnectionFailure):
                stream.try_next()
            direct.harness_net.resets.insert_one({"_id": "during"})
            faults.reset()
            seen = [stream.next()["documentKey"]["_id"] for _ in range(2)]
    assert seen == ["before", "during"], "no change may be lost or repeated across the reset"
    assert listener.names.count("aggregate") == 2, listener.names  # the first one, and the resume


def test_proxy_down_fails_server_selection_fast_and_up_recovers(faults, database_uri):
    with through(faults, database_uri, serverSelectionTimeoutMS=1500) as client:
        client.admin.command("ping")
        faults.down()
        with pytest.raises(ConnectionFailure):  # the pooled connection was closed under it
            client.admin.command("ping")
        start = time.perf_counter()
        with pytest.raises(ServerSelectionTimeoutError, match="Connection refused"):
            client.admin.command("ping")  # the server is now Unknown and the port refuses
        assert time.perf_counter() - start < 3
        faults.up()
        client.admin.command("ping")


# -- toxics and cleanliness -------------------------------------------------------
@pytest.mark.parametrize("stream", ["upstream", "downstream"])
@pytest.mark.parametrize("toxic_type", sorted(TOXIC_ATTRIBUTES))
def test_every_toxic_can_be_added_and_removed(faults, toxic_type, stream):
    attributes = dict.fromkeys(TOXIC_ATTRIBUTES[toxic_type], 7)
    name = faults.add_toxic(Toxic(toxic_type, stream, attributes, toxicity=0.5))
    [installed] = faults.toxics()
    assert (installed["name"], installed["type"], installed["stream"], installed["toxicity"]) == (
        name,
        toxic_type,
        stream,
        0.5,
    )
    assert {k: installed["attributes"][k] for k in attributes} == attributes
    faults.remove_toxic(name)
    assert faults.toxics() == []


def test_reset_removes_every_toxic_and_brings_proxies_up(faults):
    for toxic_type in TOXIC_ATTRIBUTES:
        faults.add_toxic(Toxic(toxic_type, "upstream"))
    faults.down()
    assert len(faults.leftovers()) == len(TOXIC_ATTRIBUTES) + 1
    faults.reset()
    assert faults.leftovers() == []
    faults.verify_clean()


def test_verify_clean_detects_a_left_over_toxic(faults):
    faults.add_toxic(Toxic("latency", "upstream", {"latency": 1}, name="forgotten"))
    with pytest.raises(NetworkFaultsLeftBehind, match=r"proxy 'target' still has toxic 'forgotten'"):
        faults.verify_clean()
    faults.reset()


def test_verify_clean_detects_a_proxy_left_down(faults):
    faults.down()
    with pytest.raises(NetworkFaultsLeftBehind, match=r"proxy 'target' is disabled"):
        faults.verify_clean()
    faults.up()


def test_verify_clean_detects_a_proxy_nobody_owns(faults, toxiproxy):
    toxiproxy.api._call("POST", "/proxies", json={"name": "stray", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:9"})
    try:
        with pytest.raises(NetworkFaultsLeftBehind, match=r"proxy 'stray'.*not created by this harness run"):
            faults.verify_clean()
    finally:
        toxiproxy.api._call("DELETE", "/proxies/stray")


def test_close_destroys_every_proxy_it_made(toxiproxy, database_uri):
    network = NetworkFaults(toxiproxy)
    network.add_proxy(single_host(database_uri), name="short-lived")
    assert "short-lived" in toxiproxy.api.proxies()
    assert network.close() == []
    assert "short-lived" not in toxiproxy.api.proxies()


def test_two_servers_in_one_process_keep_their_own_toxics(toxiproxy, database_uri):
    """Each NetworkFaults talks to its own server's address: two in one process stay apart."""
    with ToxiproxyServer() as other_server:
        mine, other = NetworkFaults(toxiproxy), NetworkFaults(other_server)
        try:
            mine.add_proxy(single_host(database_uri), name="mine")
            other.add_proxy(single_host(database_uri), name="other")
            mine.add_toxic(Toxic("latency", attributes={"latency": 1}), "mine")
            other.add_toxic(Toxic("bandwidth", attributes={"rate": 1}), "other")
            assert [t["type"] for t in mine.toxics("mine")] == ["latency"]
            assert [t["type"] for t in other.toxics("other")] == ["bandwidth"]
            assert set(other_server.api.proxies()) == {"other"}
        finally:
            mine.reset()
            assert mine.close() == [] and other.close() == []
