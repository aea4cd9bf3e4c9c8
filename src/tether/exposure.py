"""Who can reach a `tether serve`, and what that asks of its seeded accounts.

On loopback only this machine's users can log in, and the demo passwords keep the first
command effortless. On any other address anyone who can reach the port could log in as
admin with them, so serve refuses to start while either seeded user still has its default
password, unless told in so many words that this is meant.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket

from tether.exits import ExitCode, Failure

# The seeded users and the passwords a cloud gets when nobody chose others.
DEFAULT_PASSWORDS: dict[str, str] = {"admin": "admin", "demo": "demo"}
PASSWORD_OPTIONS: dict[str, str] = {"admin": "--admin-password/TETHER_ADMIN_PASSWORD",
                                    "demo": "--demo-password/TETHER_DEMO_PASSWORD"}


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback one (a name is resolved)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def strong_password() -> str:
    """144 random bits, in characters that need no quoting in YAML or a shell."""
    return secrets.token_urlsafe(18)


def refuse_defaults(host: str, users: list[str]) -> Failure:
    """The one-line refusal to serve ``users``' default passwords on ``host``."""
    options = " and ".join(PASSWORD_OPTIONS[user] for user in users)
    who = " and ".join(users)
    return Failure(ExitCode.USAGE,
                   f"refusing to listen on {host} while {who} still {'has' if len(users) == 1 else 'have'} "
                   f"the default password (anyone who reaches the port could log in): set {options}, "
                   f"or --generate-passwords; --insecure-default-passwords if this is really meant")


def seed_passwords(given: dict[str, str | None], host: str, *, generate: bool, insecure: bool) -> dict[str, str]:
    """The seeded users' passwords for a new cloud: those given, else generated or the defaults; a
    ``Failure`` when defaults would be served beyond loopback."""
    chosen = {user: password or (strong_password() if generate else DEFAULT_PASSWORDS[user])
              for user, password in given.items()}
    defaults = [user for user, password in chosen.items() if password == DEFAULT_PASSWORDS[user]]
    if defaults and not insecure and not is_loopback(host):
        raise refuse_defaults(host, defaults)
    return chosen
