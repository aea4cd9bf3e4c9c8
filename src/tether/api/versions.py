"""Microversions: what each service honestly implements, negotiation, and the echo headers.

The version a request asks for is found as nova and ironic find it, with
``microversion_parse`` (the ``OpenStack-API-Version: <service> <version>``
header, else the service's legacy header); this module then reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import microversion_parse

COMPUTE_MIN, COMPUTE_MAX = (2, 1), (2, 96)
BAREMETAL_MIN, BAREMETAL_MAX = (1, 1), (1, 99)

# The service type each microversioned service answers to in OpenStack-API-Version, and its legacy header.
SERVICE_TYPES = {"compute": ("compute", "x-openstack-nova-api-version"),
                 "baremetal": ("baremetal", "x-openstack-ironic-api-version")}

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


@lru_cache(maxsize=256)
def parse(text: str) -> tuple[int, int]:
    """A version literal of the code ("2.47") as a comparable pair."""
    # The views ask a dozen times a request, always with one of a few literals.
    major, minor = text.split(".")
    return int(major), int(minor)


@dataclass(frozen=True, order=True)
class Microversion:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def at_least(self, text: str) -> bool:
        return (self.major, self.minor) >= parse(text)

    def at_most(self, text: str) -> bool:
        return (self.major, self.minor) <= parse(text)

    def within(self, since: str, until: str | None = None) -> bool:
        """From ``since`` on, and up to ``until`` included when there is one."""
        return self.at_least(since) and (until is None or self.at_most(until))


def requested(service: str, headers: Mapping[str, str]) -> str | None:
    """The version a request asks ``service`` for, as its headers say it (one lower-cased name each).

    ``microversion_parse.get_version`` in two steps, looking only at headers
    that are there: it would copy the headers again and try each name twice.
    """
    service_type, legacy = SERVICE_TYPES[service]
    found = None
    if microversion_parse.STANDARD_HEADER in headers:
        found = microversion_parse.check_standard_header(headers, service_type)  # type: ignore[arg-type]
    if not found and legacy in headers:
        found = microversion_parse.check_legacy_headers(headers, [legacy])  # type: ignore[arg-type]
    return found


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
