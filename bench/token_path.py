"""The token path at deployment scale: one service user logging in again and again, 8 at a time.

Ironic (and other services) ask keystone for a new token before nearly every call they make to
another service, always with the same password. This starts two `tether serve`s side by side:
one that hashes every login (``--credential-cache-seconds 0``, what Tether did before) and one
with its default verified-credential cache, and on each runs the same load: a service user
(``bench-service``, admin on the ``service`` project) logs in ``--logins`` times, ``--concurrency``
requests in flight at once, after a short warm-up. It prints tokens/s, p50 and p99 for each, and
their ratios, in the same run.

    python bench/token_path.py [--logins 240] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from _live import live_cloud

SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT = "bench-service", "bench-service-secret", "service"


def login_body(user: str, password: str, project: str) -> dict[str, object]:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"id": "default"}}}}}


def make_service_user(base_url: str) -> None:
    """A user of its own on a project of its own, as a deployment gives each service."""
    identity = f"{base_url}/identity/v3"
    with httpx.Client(timeout=60) as client:
        admin = client.post(f"{identity}/auth/tokens", json=login_body("admin", "admin", "admin"))
        admin.raise_for_status()
        headers = {"X-Auth-Token": admin.headers["X-Subject-Token"]}
        projects = client.get(f"{identity}/projects", params={"name": SERVICE_PROJECT}, headers=headers).json()
        if projects["projects"]:
            project_id = projects["projects"][0]["id"]
        else:
            project_id = client.post(f"{identity}/projects", headers=headers, json={"project": {
                "name": SERVICE_PROJECT, "domain_id": "default"}}).raise_for_status().json()["project"]["id"]
        user = client.post(f"{identity}/users", headers=headers, json={"user": {
            "name": SERVICE_USER, "password": SERVICE_PASSWORD, "domain_id": "default"}}).raise_for_status()
        role = client.get(f"{identity}/roles", params={"name": "admin"}, headers=headers).json()["roles"][0]
        client.put(f"{identity}/projects/{project_id}/users/{user.json()['user']['id']}/roles/{role['id']}",
                   headers=headers).raise_for_status()


def run_logins(base_url: str, logins: int, concurrency: int) -> tuple[float, list[float]]:
    """``logins`` logins, ``concurrency`` at a time: the wall time and each one's latency."""
    url = f"{base_url}/identity/v3/auth/tokens"
    body = login_body(SERVICE_USER, SERVICE_PASSWORD, SERVICE_PROJECT)
    local = threading.local()

    def one(_: int) -> float:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(timeout=120)
        started = time.perf_counter()
        answer = client.post(url, json=body)
        elapsed = time.perf_counter() - started
        assert answer.status_code == 201, answer.text
        return elapsed

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(concurrency * 2)))  # warm-up: connections, and the cache where there is one
        started = time.perf_counter()
        latencies = list(pool.map(one, range(logins)))
        wall = time.perf_counter() - started
    return wall, latencies


def summary(wall: float, latencies: list[float]) -> tuple[float, float, float]:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return len(latencies) / wall, statistics.median(latencies), p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=240)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    results: dict[str, tuple[float, float, float]] = {}
    for label, extra in (("hash every login", ("--credential-cache-seconds", "0")),
                         ("verified-credential cache", ())):
        with live_cloud(*extra) as cloud:
            make_service_user(cloud.base_url)
            results[label] = summary(*run_logins(cloud.base_url, args.logins, args.concurrency))
    print(f"{args.logins} password logins of one service user, {args.concurrency} at a time, "
          "POST /identity/v3/auth/tokens (project-scoped, with catalog)")
    for label, (rate, p50, p99) in results.items():
        print(f"  {label:26} {rate:8.1f} tokens/s   p50 {p50 * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms")
    (before_rate, before_p50, before_p99), (after_rate, after_p50, after_p99) = results.values()
    print(f"  cache / no cache: tokens/s x{after_rate / before_rate:.1f}   "
          f"p50 /{before_p50 / after_p50:.1f}   p99 /{before_p99 / after_p99:.1f}")


if __name__ == "__main__":
    main()
