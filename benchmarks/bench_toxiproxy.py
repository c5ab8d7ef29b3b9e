"""What Toxiproxy costs with no toxics: the same workload direct and through the proxy, one run.

A ratio to a direct connection measured in the same process is the number to
read; absolute times on a shared machine are not. Direct and proxied rounds
alternate so drift on the machine hits both. The change-event writer always
connects directly, so only the change stream's reads cross the proxy.

    python benchmarks/bench_toxiproxy.py           # ~10 s
    python benchmarks/bench_toxiproxy.py --quick   # a few seconds
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass, field

from pymongo import MongoClient

from faults.network import NetworkFaults, ToxiproxyServer, proxied_uri, single_host


@dataclass
class Path:
    """One way to reach the database, and what it measured."""

    name: str
    uri: str
    round_trips_s: list[float] = field(default_factory=list)
    events_per_s: list[float] = field(default_factory=list)


def time_round_trips(client: MongoClient, count: int) -> list[float]:
    """Seconds per ``find_one`` by _id: a command with a reply body, the harness's typical unit."""
    collection = client.bench_toxiproxy.lookups
    timings = []
    for _ in range(count):
        began = time.perf_counter()
        collection.find_one({"_id": 0})
        timings.append(time.perf_counter() - began)
    return timings


def change_event_rate(reader: MongoClient, writer: MongoClient, count: int) -> float:
    """Events per second, from the start of a bulk insert to the last event read through ``reader``."""
    with reader.bench_toxiproxy.changes.watch(max_await_time_ms=50, batch_size=1000) as stream:
        began = time.perf_counter()
        writer.bench_toxiproxy.changes.insert_many([{"n": n} for n in range(count)], ordered=False)
        received = 0
        while received < count:
            if stream.try_next() is not None:
                received += 1
        return count / (time.perf_counter() - began)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(paths: list[Path], writer: MongoClient, rounds: int, commands: int, events: int) -> None:
    writer.bench_toxiproxy.lookups.replace_one({"_id": 0}, {"_id": 0, "payload": "x" * 200}, upsert=True)
    clients = {path.name: MongoClient(path.uri) for path in paths}
    try:
        for client in clients.values():  # connections open, caches warm, before any timing
            time_round_trips(client, 50)
            change_event_rate(client, writer, 50)
        for _ in range(rounds):
            for path in paths:
                path.round_trips_s += time_round_trips(clients[path.name], commands)
                path.events_per_s.append(change_event_rate(clients[path.name], writer, events))
    finally:
        for client in clients.values():
            client.close()


def report(direct: Path, proxied: Path, version: str) -> dict:
    def summary(path: Path) -> dict:
        return {
            "p50_us": statistics.median(path.round_trips_s) * 1e6,
            "p95_us": percentile(path.round_trips_s, 0.95) * 1e6,
            "events_per_s": statistics.median(path.events_per_s),
        }

    mine, theirs = summary(proxied), summary(direct)
    result = {
        "toxiproxy": version,
        "direct": theirs,
        "toxiproxy_no_toxics": mine,
        "latency_p50_ratio": mine["p50_us"] / theirs["p50_us"],
        "latency_p95_ratio": mine["p95_us"] / theirs["p95_us"],
        "throughput_ratio": mine["events_per_s"] / theirs["events_per_s"],
    }
    print(f"toxiproxy-server {version}, no toxics, vs a direct connection (same run, alternating rounds)")
    print(f"{'':24}{'direct':>12}{'toxiproxy':>12}{'ratio':>8}")
    for label, key, ratio in (
        ("find_one p50 (us)", "p50_us", "latency_p50_ratio"),
        ("find_one p95 (us)", "p95_us", "latency_p95_ratio"),
        ("change events / s", "events_per_s", "throughput_ratio"),
    ):
        print(f"{label:24}{theirs[key]:12.0f}{mine[key]:12.0f}{result[ratio]:8.2f}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run of a few seconds")
    parser.add_argument("--json", action="store_true", help="also print the numbers as one JSON line")
    args = parser.parse_args()
    rounds, commands, events = (1, 300, 500) if args.quick else (3, 2000, 3000)

    from secantus import SecantusDBServer

    database = SecantusDBServer(port=0, storage_path=":memory:")
    database.start()
    try:
        with ToxiproxyServer() as server, NetworkFaults(server) as network:
            proxy = network.add_proxy(single_host(database.uri), name="bench")
            # Both URIs go through the same rewrite (directConnection=true), so the proxy is the only difference.
            direct = Path("direct", proxied_uri(database.uri, single_host(database.uri)))
            through = Path("toxiproxy", proxied_uri(database.uri, proxy.listen))
            with MongoClient(direct.uri) as writer:
                measure([direct, through], writer, rounds, commands, events)
            network.verify_clean()
            result = report(direct, through, server.version)
        if args.json:
            print(json.dumps(result))
    finally:
        database.stop()


if __name__ == "__main__":
    main()
