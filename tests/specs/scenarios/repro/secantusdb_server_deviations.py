"""Reproduces SecantusDB's change-stream deviations from MongoDB's server overview with pymongo alone,
outside the harness (specs/expectations/secantusdb.yml names each). Against any server:

    python -m secantus --port 27999 &
    python tests/specs/scenarios/repro/secantusdb_server_deviations.py mongodb://127.0.0.1:27999/?directConnection=true

With no argument it starts an embedded SecantusDB itself. Each line says what the overview asks and what
came back. Seen with SecantusDB 0.7 (reporting 8.2.11) and pymongo 4.20.0:
  SRV-POSTIMAGE           fullDocument whenAvailable gives null for updates read after a later delete
                          (the document is looked up when the event is read, not rebuilt from its pre-image)
  SRV-NO-VIEWS            watching a view opens a stream
  SRV-CLUSTER-ADMIN-ONLY  allChangesForCluster outside admin, and a stream on admin without it, both open
  SRV-START-EXCLUSIVE     an aggregate with two start points (resumeAfter with startAtOperationTime, and
                          resumeAfter with startAfter, real tokens) opens a stream
  SRV-BATCH-16MB          one getMore returns three events of 6 MiB (18 MiB): batches are cut by batchSize only
  matchCollectionUUIDForUpdateLookup is refused as an unknown field (40415)
"""

import sys

from pymongo import MongoClient
from pymongo.errors import OperationFailure


def opens(db, target, spec):
    """Whether an aggregate with ``$changeStream: spec`` on ``target`` (a name, or 1) opens a cursor."""
    try:
        db.command({"aggregate": target, "pipeline": [{"$changeStream": spec}], "cursor": {}})
        return "opened"
    except OperationFailure as exc:
        return f"refused ({exc.code})"


def _doubled(seed: str, times: int) -> dict:
    """A server-side expression for ``seed`` doubled ``times`` times (2**times characters)."""
    double = {"$concat": ["$$value", "$$value"]}
    return {"$reduce": {"input": {"$range": [0, times]}, "initialValue": seed, "in": double}}


def main(uri: str) -> None:
    client = MongoClient(uri)
    client.drop_database("repro_server")
    db = client.repro_server

    db.create_collection("images", changeStreamPreAndPostImages={"enabled": True})
    db.images.insert_one({"_id": 1, "n": 0})
    stream = db.images.watch(full_document="whenAvailable", max_await_time_ms=100)
    db.images.update_one({"_id": 1}, {"$set": {"n": 1}})
    db.images.delete_one({"_id": 1})
    event = stream.next()
    print(f"SRV-POSTIMAGE: update's fullDocument {event.get('fullDocument')!r} (expected {{'_id': 1, 'n': 1}})")
    stream.close()

    db.create_collection("plain")
    db.create_collection("view", viewOn="plain", pipeline=[])
    print(f"SRV-NO-VIEWS: watch on a view: {opens(db, 'view', {})} (expected refused)")
    flagged = opens(db, 1, {"allChangesForCluster": True})
    print(f"SRV-CLUSTER-ADMIN-ONLY: allChangesForCluster on repro_server: {flagged} (expected refused)")
    print(f"SRV-CLUSTER-ADMIN-ONLY: a stream on admin without it: {opens(client.admin, 1, {})} (expected refused)")

    stream = db.plain.watch(max_await_time_ms=100)
    db.plain.insert_one({"_id": 1})
    token, time = (event := stream.next())["_id"], event["clusterTime"]
    stream.close()
    both = {"resumeAfter": token, "startAtOperationTime": time}
    print(f"SRV-START-EXCLUSIVE: resumeAfter + startAtOperationTime: {opens(db, 'plain', both)} (expected refused)")
    both = {"resumeAfter": token, "startAfter": token}
    print(f"SRV-START-EXCLUSIVE: resumeAfter + startAfter: {opens(db, 'plain', both)} (expected refused)")
    db.plain.insert_many([{"_id": n} for n in (2, 3, 4)])
    opened = db.command({"aggregate": "plain", "pipeline": [{"$changeStream": {}}], "cursor": {}})
    six_mib = {"$concat": [_doubled("x", 22), _doubled("y", 21)]}
    db.plain.update_many({"_id": {"$in": [2, 3, 4]}}, [{"$set": {"s": six_mib}}])
    batch = db.command("getMore", opened["cursor"]["id"], collection="plain")["cursor"]["nextBatch"]
    print(f"SRV-BATCH-16MB: three 6 MiB events, the first getMore holds {len(batch)} (expected 2)")
    flag = {"fullDocument": "updateLookup", "matchCollectionUUIDForUpdateLookup": True}
    print(f"matchCollectionUUIDForUpdateLookup: {opens(db, 'plain', flag)} (a flag of the overview)")
    client.drop_database("repro_server")
    client.close()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        from secantus import SecantusDBServer

        with SecantusDBServer(port=0, storage_path=":memory:") as server:
            main(server.uri + ("&" if "?" in server.uri else "?") + "directConnection=true")
