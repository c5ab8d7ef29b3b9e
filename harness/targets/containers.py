"""A real ``mongod`` single-node replica set in Docker, through ``testcontainers``.

Change streams need a replica set, so the container runs ``mongod --replSet``
with test commands on (``--setParameter enableTestCommands=1``: fail points are
the server's own), and the harness initiates the set with the member address
as the container sees itself (``localhost:27017``), then waits until that member
is primary. The mapped host port is not reachable from inside the container, so
drivers connect with ``directConnection=true``; ``hello`` still reports the set
name, and the target is detected as a replica set. The container is removed
when the target stops, and when starting fails half-way.

Needs a Docker engine and ``pip install -e '.[containers]'``; without either
the target is unavailable with one line saying which, and pointing at
``--target uri=...`` for a ``mongod`` that is already running. The container
API and the harness's client are reached through two factories
(:class:`MongoContainerTarget`'s ``container_factory`` and ``client_factory``),
which is where the tests stand in for Docker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.shared.target_base import TargetBase

REPLICA_SET = "rs0"
MONGOD_PORT = 27017
#: mongod's arguments: a one-member replica set, listening on every interface of the container, test commands on.
MONGOD_ARGUMENTS = f"--replSet {REPLICA_SET} --bind_ip_all --setParameter enableTestCommands=1"
#: The member's address as the container sees itself (the host's mapped port means nothing inside it).
MEMBER_HOST = f"localhost:{MONGOD_PORT}"
ALREADY_INITIALIZED = 23
READY_TIMEOUT_S = 60.0
#: What to give instead when no engine is reachable.
INSTEAD = "to test a mongod that is already running, give --target uri=mongodb://HOST:PORT/ instead"


def _first_line(exc: BaseException) -> str:
    """One line of an exception's words: Docker's errors can run to several."""
    words = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {words[0] if words else ''}".rstrip(": ")


def testcontainers_factory(image: str) -> Any:
    """testcontainers' container for ``image`` (creating it asks the Docker engine its version)."""
    try:
        from testcontainers.core.container import DockerContainer
    except ImportError as exc:
        raise TargetUnavailable(
            f"the testcontainers target needs: pip install -e '.[containers]' ({exc}); {INSTEAD}"
        ) from None
    return DockerContainer(image)


def initiate_single_node(
    client: Any,
    *,
    image: str,
    timeout_s: float = READY_TIMEOUT_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """``replSetInitiate`` once mongod answers, then wait until ``hello`` says it is the writable primary.

    A mongod still starting refuses connections (a ``PyMongoError`` other than a command failure): try again
    until ``timeout_s``. ``AlreadyInitialized`` (a reused container) is success. Any other command failure
    is the answer, not a delay.
    """
    deadline = clock() + timeout_s
    config = {"_id": REPLICA_SET, "members": [{"_id": 0, "host": MEMBER_HOST}]}
    while True:
        try:
            client.admin.command("replSetInitiate", config)
            break
        except OperationFailure as exc:
            if exc.code == ALREADY_INITIALIZED:
                break
            raise TargetUnavailable(f"replSetInitiate failed on {image}: {exc}") from None
        except PyMongoError as exc:
            if clock() > deadline:
                raise TargetUnavailable(
                    f"{image} did not answer within {timeout_s:g}s: {_first_line(exc)}; {INSTEAD}"
                ) from None
            sleep(0.5)
    while True:
        try:
            if client.admin.command("hello").get("isWritablePrimary"):
                return
        except PyMongoError:
            pass  # the member may drop connections while it changes state
        if clock() > deadline:
            raise TargetUnavailable(f"{image} did not become primary within {timeout_s:g}s")
        sleep(0.2)


class MongoContainerTarget(TargetBase):
    kind = "testcontainers"

    def __init__(
        self,
        image: str = "mongo:8.0",
        name: str | None = None,
        *,
        container_factory: Callable[[str], Any] | None = None,
        client_factory: Callable[..., Any] = MongoClient,
    ) -> None:
        super().__init__(name or f"mongod-{image.partition(':')[2] or 'latest'}")
        self.image = image
        self.container: Any = None
        #: None: testcontainers' own (looked up when the target starts).
        self._container_factory = container_factory
        self._client_factory = client_factory

    def start(self) -> TargetInfo:
        try:
            container = (self._container_factory or testcontainers_factory)(self.image)
        except TargetUnavailable:
            raise
        except Exception as exc:
            raise TargetUnavailable(
                f"testcontainers: no Docker engine is reachable ({_first_line(exc)}); {INSTEAD}"
            ) from None
        container = container.with_command(MONGOD_ARGUMENTS).with_exposed_ports(MONGOD_PORT)
        try:
            container.start()
        except Exception as exc:
            raise TargetUnavailable(f"testcontainers could not start {self.image}: {_first_line(exc)}") from None
        self.container = container  # from here on, stop() removes it, whatever fails next
        try:
            host, port = container.get_container_host_ip(), container.get_exposed_port(MONGOD_PORT)
            self.uri = f"mongodb://{host}:{port}/?directConnection=true"
            with self._client_factory(self.uri, serverSelectionTimeoutMS=2_000) as client:
                initiate_single_node(client, image=self.image)
            self.connect_admin()
        except BaseException:
            self.stop()
            raise
        self.info.details.update({"image": self.image, "test_commands": True, "replica_set": REPLICA_SET})
        return self.info

    def stop(self) -> None:
        super().stop()
        if self.container is not None:
            container, self.container = self.container, None
            container.stop()  # testcontainers removes the container (and its volumes) on stop
