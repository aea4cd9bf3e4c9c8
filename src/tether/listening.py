"""The listening sockets of `tether serve`, opened before anything else is touched.

Binding first means a port in use costs nothing: no data dir made, no cloud recovered. Listening
at once, before the cloud is open, means a client that connects early waits in the kernel's
backlog and is answered once the cloud is ready, instead of being refused.
"""

from __future__ import annotations

import errno
import socket

from tether.exits import ExitCode, Failure

BACKLOG = 2048  # uvicorn's default


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound and listening on every address ``host`` resolves to (as asyncio's create_server binds)."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise Failure(ExitCode.USAGE, f"cannot listen on {host!r}: {error.strerror}; give --host an address of "
                                      f"this machine") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(addresses):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            # With --port 0, every address of a name like "localhost" on the port the first one got.
            sock.bind((address[0], port, *address[2:]))
            port = sock.getsockname()[1]
            sock.listen(BACKLOG)
    except OSError as error:
        for sock in sockets:
            sock.close()
        where = f"{host}:{port}"
        if error.errno == errno.EADDRINUSE:
            raise Failure(ExitCode.PORT_IN_USE, f"port {port} on {host} is in use (another tether serve?); give "
                                                f"this one another --port") from None
        raise Failure(ExitCode.USAGE, f"cannot listen on {where}: {error.strerror}; give another --host or "
                                      f"--port") from None
    return sockets


def port_of(sockets: list[socket.socket]) -> int:
    return int(sockets[0].getsockname()[1])


__all__ = ["listen", "port_of"]
