"""A wire proxy in front of a running server, its change-stream replies reshaped as an older server's were.

Two of the Java driver's deviations show only on replies a current server does not send (a change without its
``_id``; a cursor reply without ``postBatchResumeToken``). This starts the harness's own wire proxy
(harness/shared/wire, docs/wire-proxy.md) with one shaping profile, prints its URI and serves until interrupted;
the Java reproductions then connect to that URI. Nothing of the harness's runner or of the Java executor is involved.

    python tests/repro/java/shaping_proxy.py unchecked-event-ids 127.0.0.1:27999
"""

from __future__ import annotations

import sys
import time

from harness.shared.wire.proxy import WireProxy


def main(argv: list[str]) -> int:
    profile, upstream = argv[1], argv[2]
    host, port = upstream.rsplit(":", 1)
    proxy = WireProxy(host, int(port))
    proxy.start()
    proxy.shape_replies({"profile": profile})
    print(proxy.uri, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
