"""A real ``mongod`` single-node replica set in Docker, through ``testcontainers``.

Change streams need a replica set, so the container runs ``mongod --replSet``
and the harness initiates it with the member address as the container sees
itself (``localhost:27017``). The mapped host port is not reachable from
inside the container, so drivers connect with ``directConnection=true``;
``hello`` still reports the set name, and the target is detected as a
replica set. Needs a Docker engine and ``pip install -e '.[containers]'``;
without them the target is unavailable with a message saying which.
"""

from __future__ import annotations

import time

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets.target_base import TargetBase

REPLICA_SET = "rs0"
_READY_TIMEOUT_S = 60.0


class MongoContainerTarget(TargetBase):
    kind = "testcontainers"

    def __init__(self, image: str = "mongo:8.0", name: str | None = None) -> None:
        super().__init__(name or f"mongod-{image.partition(':')[2] or 'latest'}")
        self.image = image
        self.container = None

    def start(self) -> TargetInfo:
        try:
            from testcontainers.core.container import DockerContainer
        except ImportError as exc:
            raise TargetUnavailable("the testcontainers target needs: pip install -e '.[containers]'") from exc
        container = DockerContainer(self.image).with_command(f"--replSet {REPLICA_SET} --bind_ip_all")
        container = container.with_exposed_ports(27017)
        try:
            container.start()
        except Exception as exc:
            raise TargetUnavailable(
                f"could not start {self.image} with testcontainers (is a Docker engine running?): {exc}"
            ) from exc
        self.container = container
        host, port = container.get_container_host_ip(), container.get_exposed_port(27017)
        self.uri = f"mongodb://{host}:{port}/?directConnection=true"
        self._initiate()
        self.connect_admin()
        self.info.details["image"] = self.image
        return self.info

    def _initiate(self) -> None:
        """``replSetInitiate`` once mongod answers, then wait for it to become primary."""
        deadline = time.monotonic() + _READY_TIMEOUT_S
        with MongoClient(self.uri, serverSelectionTimeoutMS=2_000) as client:
            while True:
                try:
                    client.admin.command(
                        "replSetInitiate", {"_id": REPLICA_SET, "members": [{"_id": 0, "host": "localhost:27017"}]}
                    )
                    break
                except OperationFailure as exc:
                    if exc.code == 23:  # AlreadyInitialized
                        break
                    raise TargetUnavailable(f"replSetInitiate failed on {self.image}: {exc}") from exc
                except PyMongoError:
                    if time.monotonic() > deadline:
                        raise TargetUnavailable(f"{self.image} did not answer within {_READY_TIMEOUT_S:g}s") from None
                    time.sleep(0.5)
            while not client.admin.command("hello").get("isWritablePrimary"):
                if time.monotonic() > deadline:
                    raise TargetUnavailable(f"{self.image} did not become primary within {_READY_TIMEOUT_S:g}s")
                time.sleep(0.2)

    def stop(self) -> None:
        super().stop()
        if self.container is not None:
            self.container.stop()
            self.container = None
