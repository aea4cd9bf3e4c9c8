"""Microversions: what each service honestly implements, negotiation, and the echo headers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

COMPUTE_MIN, COMPUTE_MAX = (2, 1), (2, 96)
BAREMETAL_MIN, BAREMETAL_MAX = (1, 1), (1, 99)

_VERSION = re.compile(r"^(\d+)\.(\d+)$")


class VersionNotAcceptable(Exception):
    def __init__(self, service: str, requested: str, low: tuple[int, int], high: tuple[int, int]) -> None:
        super().__init__(
            f"Version {requested} is not supported by the API. Minimum is {fmt(low)} and maximum is {fmt(high)}.")
        self.service = service


class VersionMalformed(Exception):
    def __init__(self, requested: str) -> None:
        super().__init__(f"Invalid API version request string {requested!r}.")


def fmt(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True, order=True)
class Microversion:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def at_least(self, text: str) -> bool:
        return (self.major, self.minor) >= _parsed(text)


@lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[int, int]:
    # The views ask a dozen times a request, always with one of a few literals.
    major, minor = text.split(".")
    return int(major), int(minor)


def negotiate(service: str, requested: str | None, low: tuple[int, int], high: tuple[int, int],
              default: tuple[int, int]) -> Microversion:
    if requested is None or not requested.strip():
        return Microversion(*default)
    requested = requested.strip()
    if requested.lower() == "latest":
        return Microversion(*high)
    match = _VERSION.match(requested)
    if not match:
        raise VersionMalformed(requested)
    version = (int(match[1]), int(match[2]))
    if not low <= version <= high:
        raise VersionNotAcceptable(service, requested, low, high)
    return Microversion(*version)


def compute_request(headers: dict[str, str]) -> str | None:
    """The compute microversion a request asks for, from either header nova reads."""
    combined = headers.get("openstack-api-version")
    if combined:
        for part in combined.split(","):
            words = part.strip().split()
            if len(words) == 2 and words[0].lower() == "compute":
                return words[1]
    return headers.get("x-openstack-nova-api-version")


def baremetal_request(headers: dict[str, str]) -> str | None:
    combined = headers.get("openstack-api-version")
    if combined:
        for part in combined.split(","):
            words = part.strip().split()
            if len(words) == 2 and words[0].lower() == "baremetal":
                return words[1]
    return headers.get("x-openstack-ironic-api-version")
