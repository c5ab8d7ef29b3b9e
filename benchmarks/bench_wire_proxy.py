"""What the wire proxy costs: the same workload direct and through the proxy, in one run.

Not a timed test: it prints numbers and ratios for a person to read (a
ratio is meaningful, an absolute time on a shared machine is not). Both
paths hit the same embedded SecantusDB, alternating, so drift on the machine
affects both alike.

    python benchmarks/bench_wire_proxy.py            # 2,000 pings/finds, 2,000 change events
    python benchmarks/bench_wire_proxy.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import statistics
import time
from urllib.parse import urlparse

from pymongo import MongoClient

from harness.shared.wire import WireProxy


def per_command_us(client: MongoClient, n: int, kind: str) -> float:
    """Median latency of one round trip, in microseconds."""
    coll = client.bench.latency
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        if kind == "ping":
            client.admin.command("ping")
        else:
            coll.find_one({"_id": 1})
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def change_events_per_s(client: MongoClient, writer: MongoClient, n: int) -> float:
    """Events per second from the first insert to the n-th event read (inserts go direct)."""
    coll = client.bench.events
    with coll.watch(max_await_time_ms=50, batch_size=1000) as stream:
        start = time.perf_counter()
        writer.bench.events.insert_many([{"i": i} for i in range(n)])
        seen = 0
        while seen < n:
            if stream.try_next() is not None:
                seen += 1
        return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--commands", type=int, default=None, help="round trips per latency measurement")
    parser.add_argument("--events", type=int, default=None, help="change events per throughput measurement")
    parser.add_argument("--rounds", type=int, default=None, help="alternating direct/proxy rounds")
    args = parser.parse_args()
    commands = args.commands or (300 if args.quick else 2000)
    events = args.events or (300 if args.quick else 2000)
    rounds = args.rounds or (1 if args.quick else 3)

    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:", enable_test_commands=False)
    server.start()
    target = urlparse(server.uri)
    proxy = WireProxy(target.hostname, target.port)
    proxy.start()
    clients = {"direct": MongoClient(server.uri), "proxy": MongoClient(proxy.uri)}
    try:
        clients["direct"].bench.latency.insert_one({"_id": 1, "x": "y" * 100})
        results: dict[str, dict[str, list[float]]] = {name: {"ping": [], "find": [], "events": []} for name in clients}
        for client in clients.values():  # warm up pools and caches
            per_command_us(client, 50, "ping")
            per_command_us(client, 50, "find")
        for _ in range(rounds):
            for name, client in clients.items():
                results[name]["ping"].append(per_command_us(client, commands, "ping"))
                results[name]["find"].append(per_command_us(client, commands, "find"))
                results[name]["events"].append(change_events_per_s(client, clients["direct"], events))
        direct, proxied = ({k: statistics.median(v) for k, v in results[n].items()} for n in ("direct", "proxy"))
        print(f"wire proxy benchmark: {commands} round trips, {events} change events, {rounds} round(s)")
        print(f"{'measure':<24}{'direct':>12}{'proxy':>12}{'ratio':>9}")
        for key, label in (("ping", "ping median (us)"), ("find", "find_one median (us)")):
            print(f"{label:<24}{direct[key]:>12.0f}{proxied[key]:>12.0f}{proxied[key] / direct[key]:>8.2f}x")
        print(
            f"{'change events/s':<24}{direct['events']:>12.0f}{proxied['events']:>12.0f}"
            f"{direct['events'] / proxied['events']:>8.2f}x  (slowdown)"
        )
    finally:
        for client in clients.values():
            client.close()
        proxy.stop()
        server.stop()


if __name__ == "__main__":
    main()
