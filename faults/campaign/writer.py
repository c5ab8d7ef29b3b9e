"""The campaign's writer: documents ``{_id: seq, seq}`` inserted in order, each exactly once.

It writes through the harness's admin client, straight to the target (never
through the consumer's proxy or fail points), in small ordered batches, one
batch acknowledged before the next: so the server's change events must
carry the seqs in order. Across a target restart an insert may fail with its
fate unknown; the batch is then retried with only the seqs not already
stored (``_id = seq`` makes a repeat impossible, and an ordered insert stores
a prefix, so the missing ones are a suffix and order is kept).

Backpressure: the writer stays at most ``max_lag`` documents ahead of the
consumer, so faults scheduled by the consumer's progress also hit writes
(a restart interrupts both), instead of a writer that finished long ago.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pymongo.errors import BulkWriteError, PyMongoError


class Writer(threading.Thread):
    def __init__(
        self,
        collection: Any,
        count: int,
        *,
        consumed: Callable[[], int],
        batch_size: int = 20,
        max_lag: int = 300,
        give_up_after_s: float = 60.0,
    ) -> None:
        super().__init__(name="campaign-writer", daemon=True)
        self.collection = collection
        self.count = count
        self.consumed = consumed
        self.batch_size = batch_size
        self.max_lag = max_lag
        self.give_up_after_s = give_up_after_s
        self.written = 0
        self.retries = 0
        self.problems: list[str] = []
        self.stopping = threading.Event()
        self.finished = threading.Event()

    def run(self) -> None:
        try:
            for start in range(0, self.count, self.batch_size):
                while self.written - self.consumed() > self.max_lag and not self.stopping.is_set():
                    time.sleep(0.005)
                if self.stopping.is_set():
                    return
                seqs = list(range(start, min(start + self.batch_size, self.count)))
                if not self._write_batch(seqs):
                    return
                self.written = seqs[-1] + 1
        except Exception as exc:
            self.problems.append(f"writer crashed: {type(exc).__name__}: {exc}")
        finally:
            self.finished.set()

    def _write_batch(self, seqs: list[int]) -> bool:
        """Insert the batch until acknowledged; False when the target stayed unwritable too long."""
        deadline = time.monotonic() + self.give_up_after_s
        retrying = False
        while not self.stopping.is_set():
            try:
                missing = self._missing(seqs) if retrying else seqs
                if missing:
                    self.collection.insert_many([{"_id": s, "seq": s} for s in missing], ordered=True)
                return True
            except BulkWriteError as exc:
                codes = {e.get("code") for e in exc.details.get("writeErrors", [])}
                if codes - {11000}:
                    self.problems.append(f"insert of seq {seqs[0]}-{seqs[-1]} failed: {exc.details}")
                    return False
            except PyMongoError as exc:
                if time.monotonic() > deadline:
                    self.problems.append(
                        f"seq {seqs[0]}-{seqs[-1]}: target unwritable for {self.give_up_after_s:g}s: {exc}"
                    )
                    return False
            self.retries += 1
            retrying = True
            time.sleep(0.05)
        return False

    def _missing(self, seqs: list[int]) -> list[int]:
        present = {d["_id"] for d in self.collection.find({"_id": {"$in": seqs}}, {"_id": 1})}
        missing = [s for s in seqs if s not in present]
        if missing and present and max(present) > missing[0]:
            self.problems.append(f"an ordered insert stored {sorted(present)} of {seqs}: not a prefix")
        return missing

    def verify(self) -> list[str]:
        """What the collection holds is exactly seq 0..count-1, once each (asked of the target)."""
        problems = list(self.problems)
        stored = [d["_id"] for d in self.collection.find({}, {"_id": 1}).sort("_id", 1)]
        if stored != list(range(self.count)):
            extra = sorted(set(stored) - set(range(self.count)))
            lost = sorted(set(range(self.count)) - set(stored))
            problems.append(
                f"the collection holds {len(stored)} documents, expected {self.count} "
                f"(missing {lost[:10]}, unexpected {extra[:10]})"
            )
        return problems
