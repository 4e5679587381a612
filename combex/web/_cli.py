"""``combex dashboard STORAGE``: serve the study web app with uvicorn."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from typing import Any

from .._validation import param_error
from ._app import create_app
from ._security import check_bind, check_port, is_loopback, new_token

__all__ = ["serve", "add_dashboard_command", "bind_socket", "REMOTE_WARNING"]

REMOTE_WARNING = """\
WARNING: combex dashboard is reachable from other machines at {url}
WARNING: the traffic is NOT encrypted: tokens, session cookies and scores cross the network
WARNING: in clear text. Serve it behind a TLS reverse proxy (https) or on a trusted network only.
"""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: any free port).

    Raises
    ------
    InvalidParameterError
        When the address cannot be bound (in use, not an address of this machine, ...).
    """
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise param_error("host", "combex dashboard", f"a name or address this machine resolves ({exc})",
                          host) from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise param_error("port", "combex dashboard", f"a port free on {host} ({exc.strerror or exc})",
                          port) from None
    sock.set_inheritable(True)
    return sock


def serve(storage: Any, *, host: str = "127.0.0.1", port: int = 8050, allow_remote: bool = False,
          allowed_host: Any = (), interval: float = 3.0, out: Any = None, err: Any = None) -> None:
    """Serve the study web app of ``storage`` until interrupted (Ctrl-C).

    Prints the address and a new owner token (the owner's sign-in, valid until the
    server stops) on ``out``; on a non-loopback bind (``allow_remote``), a warning that
    the traffic is unencrypted on ``err``.

    Raises
    ------
    InvalidParameterError
        A bad port, a non-loopback ``host`` without ``allow_remote``, a wildcard bind
        without ``allowed_host``, an address that cannot be bound.
    """
    import uvicorn  # uvicorn is optional (the studies extra)

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    port = check_port(port)
    check_bind(host, allow_remote=allow_remote)
    if host.strip("[]") in ("0.0.0.0", "::") and not allowed_host:
        raise param_error("allowed_host", "combex dashboard",
                          "given when every interface is bound (--allowed-host NAME: the name or address remote "
                          "browsers use for this machine; other Host headers are refused)", list(allowed_host))
    owner = new_token()
    app = create_app(storage, host=host, allowed_host=allowed_host, allow_remote=allow_remote, interval=interval,
                     owner_token=owner)
    sock = bind_socket(host, port)
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(asctime)s combex.web %(levelname)s %(message)s"))
    web_log = logging.getLogger("combex.web")
    web_log.addHandler(handler)
    web_log.setLevel(logging.INFO)
    print(f"combex dashboard on {url} (Ctrl-C to stop)", file=out, flush=True)
    print(f"owner token (sign in as the owner; a new one at every start): {owner}", file=out, flush=True)
    if not is_loopback(host):
        print(REMOTE_WARNING.format(url=url), file=err, end="", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        web_log.removeHandler(handler)


def _cmd(args: argparse.Namespace) -> int:
    serve(args.storage, host=args.host, port=args.port, allow_remote=args.allow_remote,
          allowed_host=args.allowed_host or (), interval=args.interval)
    return 0


def add_dashboard_command(sub: Any) -> None:
    """Register ``combex dashboard STORAGE`` on the ``combex`` parser's subparsers."""
    p = sub.add_parser(
        "dashboard", help="serve the study web app (follow studies, enter scores)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve the studies of STORAGE in a browser: each study's leader and challenger, how sure it "
                    "is, the stopping statistic against its threshold, per-member estimates, pending tickets "
                    "and the told log; assistants sign in with their token to ask for a team, enter its score "
                    "(with a confirmation step), release a ticket or correct a score. JSON at /api/studies and "
                    "/api/study/NAME. Listens on 127.0.0.1 unless --allow-remote.",
        epilog="Examples:\n  combex dashboard lab.db\n"
               "  combex dashboard lab.db --host 0.0.0.0 --allow-remote --allowed-host lab-pc.example.org\n"
               "Security: docs/guide/studies.md (who can read, who can write, what is logged).")
    p.add_argument("storage", help="file path (SQLite) or SQLAlchemy URL")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; a non-loopback address needs --allow-remote)")
    p.add_argument("--port", default=8050, type=str, help="TCP port (default 8050; 0: any free port)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host (plain HTTP: put it behind TLS); every study page then "
                        "needs a sign-in")
    p.add_argument("--allowed-host", action="append", default=None, metavar="NAME",
                   help="a Host header value to accept besides localhost / 127.0.0.1 / ::1 (repeatable)")
    p.add_argument("--interval", type=float, default=3.0, help="seconds between two polls of a page (default 3)")
    p.set_defaults(func=_cmd)
