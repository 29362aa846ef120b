"""Run the collector: ``pldp serve`` (uvicorn, one process; see :mod:`pldp.service.writer` for why).

One process owns the store's writer, so its group commit sees every request; the event loop takes
the connections and a thread pool parses and validates the batches. The first start on a new
database creates the admin token: read from ``--admin-token-file`` when given (a new token is
written there when the file does not exist), otherwise made here and printed once on standard
output (the store keeps only its hash).

:func:`serve` binds its address first, then opens the store, and only then says where it listens:
a port in use or a store that cannot be opened fails with a :class:`StartupError` before anything
is announced (``pldp serve`` prints it as one line and exits with 2).
"""

from __future__ import annotations

import errno
import inspect
import os
import socket
import ssl
import sys
import time
from pathlib import Path
from typing import Any

from pldp.errors import PLDPError
from pldp.service import auth, collect, connections, store
from pldp.service.app import Limits, create_app
from pldp.service.connections import GuardedHttpTools
from pldp.service.rollover import Rollover
from pldp.service.store import SchemaError
from pldp.service.writer import Writer

__all__ = ["StartupError", "app_from_env", "bootstrap_admin", "serve"]

#: The listen queue (the kernel caps it at ``net.core.somaxconn``, 4,096 by default). Under a flood
#: of connections a full queue drops a new client's SYN, which it sends again only after 1 s, then
#: 3 s: a longer queue lets it wait its turn instead (a connection costs the server about 0.1 ms).
BACKLOG = 4096


class StartupError(PLDPError, RuntimeError):
    """The collector cannot start: its address cannot be bound or its store cannot be opened.

    The message names the address or the file, the reason, and the fix.
    """


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (as uvicorn binds it: ``SO_REUSEADDR``, inheritable).

    Raises
    ------
    StartupError
        The address is in use or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = "check the host name and the port"
        if exc.errno == errno.EADDRINUSE:
            hint = "another collector (or program) listens there: stop it or choose another port"
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; {hint}") from None
    sock.set_inheritable(True)
    return sock


def check_tls(certfile: str | Path | None, keyfile: str | Path | None) -> None:
    """Load the certificate chain and its key as the server will, to fail before announcing.

    Raises
    ------
    StartupError
        A key without a certificate, a missing file, or files that are not a PEM certificate chain
        and its private key.
    """
    if certfile is None:
        if keyfile is not None:
            raise StartupError("a TLS key needs its certificate: give --ssl-certfile too")
        return
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:  # SSLError is an OSError; FileNotFoundError names the file
        why = exc.strerror if isinstance(exc, FileNotFoundError) else str(exc)
        files = f"{certfile}" + ("" if keyfile is None else f" and {keyfile}")
        raise StartupError(f"cannot load the TLS certificate {files} ({why}): give PEM files") from None


def open_store(db: str | Path) -> Writer:
    """The writer of the store ``db``, created and migrated if need be.

    Raises
    ------
    StartupError
        ``db`` is a directory, its directory does not exist, or it is not a pldp store (another
        kind of file, or one written by a newer pldp).
    """
    path = Path(db)
    if path.is_dir():
        raise StartupError(f"the store {db} is a directory: give a file in it, e.g. {path / 'pldp.db'}")
    if not path.parent.is_dir():
        raise StartupError(f"the store's directory {path.parent} does not exist: create it, or give another file")
    try:
        return Writer(path)
    except (store.SQLiteError, SchemaError, OSError) as exc:
        why = "SQLite says: " + str(exc) if isinstance(exc, store.SQLiteError) else str(exc)
        raise StartupError(f"cannot open the store {db} ({why}); give a pldp store or a new file name") from None


def bootstrap_admin(writer: Writer, token_file: str | Path | None) -> str | None:
    """Make sure the store has an admin token; return a token this call created and must show.

    With ``token_file`` the token in it becomes an admin token (if not one already) and ``None``
    is returned; a file that does not exist is created (readable by its owner only) holding a new
    token. Without it a new token is made only when the store has no admin.
    """
    conn = writer.conn
    if token_file is not None:
        path = Path(token_file)
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(auth.new_token() + "\n")
            print(f"a new admin token is in {path} (readable by you only)", file=sys.stderr, flush=True)
        token = auth.read_token_file(token_file)
        if auth.identify(conn, f"Bearer {token}") is None:
            writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (token file)", [], time.time()))
        return None
    if auth.has_admin(conn):
        return None
    token = auth.new_token()
    writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (first start)", [], time.time()))
    return token


def app_from_env() -> Any:
    """The application of a worker process started by uvicorn (``--workers N``), from the environment."""
    limits = Limits.from_json(os.environ["PLDP_LIMITS"])
    guard_connections(limits)
    rollover = None
    if os.environ.get("PLDP_EXPORT_DIR"):
        retain = os.environ.get("PLDP_RETAIN_DAYS")
        rollover = Rollover(
            Path(os.environ["PLDP_EXPORT_DIR"]),
            float(os.environ["PLDP_EXPORT_EVERY"]),
            int(retain) if retain else None,
        )
    return create_app(os.environ["PLDP_DB"], limits, rollover)


def guard_connections(limits: Limits) -> None:
    """Set this process's connection deadlines and cap (:mod:`pldp.service.connections`)."""
    connections.configure(limits.header_timeout, limits.body_timeout, limits.max_connections)


def serve(
    db: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    admin_token_file: str | Path | None = None,
    limits: Limits | None = None,
    workers: int = 1,
    rollover: Rollover | None = None,
    ssl_keyfile: str | Path | None = None,
    ssl_certfile: str | Path | None = None,
    trusted_proxies: list[str] | None = None,
) -> None:
    """Start the collector on ``host:port`` with the store ``db`` (blocks until interrupted).

    ``workers > 1`` runs that many processes on the same file (uvicorn's process manager): each
    takes connections and group-commits its own requests; SQLite serializes their transactions.
    With ``rollover``, reports are exported to files (and old ones deleted) in the background by
    one of the processes (:mod:`pldp.service.rollover`). With ``ssl_certfile`` (PEM, the
    certificate chain) and ``ssl_keyfile`` (PEM, its private key) it speaks HTTPS.

    ``limits`` bound requests, clients and connections (:class:`~pldp.service.state.Limits`).
    ``trusted_proxies`` (addresses or networks) are the proxies whose ``X-Forwarded-For`` names
    the client, which the rate limit then keys on; None: uvicorn's default, ``$FORWARDED_ALLOW_IPS``
    or else 127.0.0.1 and ::1 (a proxy on this machine); ``[]``: none.

    Raises
    ------
    StartupError
        The address is in use, or the store cannot be opened; nothing was announced.
    """
    import uvicorn

    limits = limits or Limits()
    check_tls(ssl_certfile, ssl_keyfile)
    sock = bind(host, port)  # first: a port in use fails before anything is created or announced
    try:
        writer = open_store(db)  # creates and migrates the file, once, before any worker starts
        try:
            token = bootstrap_admin(writer, admin_token_file)
        finally:
            writer.close()
    except BaseException:
        sock.close()
        raise
    if token is not None:
        print(f"admin token (shown once; the store keeps only its hash): {token}", flush=True)
    scheme, port = "https" if ssl_certfile else "http", sock.getsockname()[1]  # port 0: the one the OS chose
    address = f"[{host}]" if ":" in host else host
    where = f"{scheme}://{address}:{port} (store {Path(db).resolve()}, {workers} worker{'s' * (workers > 1)})"
    print(f"pldp collector on {where}", file=sys.stderr, flush=True)
    if rollover is not None:
        keep = "every report" if rollover.retain_days is None else f"exported reports for {rollover.retain_days} days"
        print(
            f"report files to {rollover.root} every {rollover.every:g} s; keeping {keep}", file=sys.stderr, flush=True
        )
    tls: dict[str, Any] = {
        "ssl_keyfile": None if ssl_keyfile is None else str(ssl_keyfile),
        "ssl_certfile": None if ssl_certfile is None else str(ssl_certfile),
    }
    quiet: dict[str, Any] = {"log_level": "warning", "access_log": False}
    guarded: dict[str, Any] = {"http": GuardedHttpTools, "timeout_keep_alive": 5, "backlog": BACKLOG}
    if trusted_proxies is not None:
        guarded["forwarded_allow_ips"] = ",".join(trusted_proxies) if trusted_proxies else ""
    guard_connections(limits)  # also raises the file limit, which the workers inherit
    if workers > 1:
        os.environ.update(
            PLDP_DB=str(Path(db).resolve()),
            PLDP_LIMITS=limits.to_json(),
            PLDP_EXPORT_DIR="" if rollover is None else str(rollover.root.resolve()),
            PLDP_EXPORT_EVERY="" if rollover is None else str(rollover.every),
            PLDP_RETAIN_DAYS="" if rollover is None or rollover.retain_days is None else str(rollover.retain_days),
        )
        config = uvicorn.Config(
            "pldp.service.server:app_from_env",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            **tls,
            **quiet,
            **guarded,
        )
        _run_workers(config, sock)
    else:
        config = uvicorn.Config(create_app(db, limits, rollover), host=host, port=port, **tls, **quiet, **guarded)
        server = uvicorn.Server(config)
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:  # pragma: no cover - uvicorn handles SIGINT itself
            pass
        if not server.started:  # pragma: no cover - uvicorn logged why (as uvicorn.run exits 3)
            raise StartupError("the collector did not start; uvicorn's message above says why")


def _run_workers(config: Any, sock: socket.socket) -> None:
    """``config.workers`` uvicorn processes on the bound ``sock`` (what ``uvicorn.run`` does with a
    socket it binds itself). Older uvicorn's process manager takes the server's ``run`` as
    ``target``; newer ones build it themselves."""
    from uvicorn.supervisors import Multiprocess

    extra: dict[str, Any] = {}
    if "target" in inspect.signature(Multiprocess).parameters:  # pragma: no cover - older uvicorn
        import uvicorn

        extra["target"] = uvicorn.Server(config).run
    try:
        Multiprocess(config, sockets=[sock], **extra).run()
    except KeyboardInterrupt:  # pragma: no cover - the process manager handles SIGINT itself
        pass
