"""Does a failed login's time tell who exists? Timing of keystone password logins on a live `tether serve`.

Prints, for N attempts each (interleaved, so drift in the machine's load falls on all alike), the
median and p90 wall time of POST /identity/v3/auth/tokens for:
- a user that does not exist,
- a user that exists, with a wrong password,
- a user that is locked out (after the lockout's wrong passwords),
- the right password (a token is made: the reference a failure must not fall short of),
and the ratio of the first two medians. Lockout is set high for the wrong-password row so that it
stays a wrong password throughout; the locked row uses its own user.

Target: the unknown-user and wrong-password medians within 10% of each other (both check one
argon2 hash), and the locked-out one likewise: the time says nothing of which was wrong.

    python bench/login_timing.py [--attempts 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

import httpx
from _live import live_cloud


def body(user: str, password: str) -> dict[str, object]:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=200)
    args = parser.parse_args()
    with live_cloud("--lockout-failure-attempts", "1000000", "--lockout-duration", "3600") as cloud:
        url = f"{cloud.base_url}/identity/v3/auth/tokens"
        with httpx.Client(timeout=60) as client:
            kinds = {"unknown user": body("nobody-by-this-name", "guess"), "wrong password": body("demo", "guess"),
                     "right password": body("admin", "admin")}
            times: dict[str, list[float]] = {kind: [] for kind in kinds}
            for _ in range(args.attempts):
                for kind, payload in kinds.items():
                    started = time.perf_counter()
                    status = client.post(url, json=payload).status_code
                    times[kind].append(time.perf_counter() - started)
                    assert status == (201 if kind == "right password" else 401), (kind, status)
    with live_cloud("--lockout-failure-attempts", "3", "--lockout-duration", "3600") as cloud:
        url = f"{cloud.base_url}/identity/v3/auth/tokens"
        with httpx.Client(timeout=60) as client:
            for _ in range(3):
                client.post(url, json=body("demo", "guess"))
            times["locked out"] = []
            for _ in range(args.attempts):
                started = time.perf_counter()
                answer = client.post(url, json=body("demo", "demo"))
                times["locked out"].append(time.perf_counter() - started)
                assert answer.status_code == 401 and "locked" in answer.text
    print(f"{args.attempts} attempts each, POST /identity/v3/auth/tokens")
    for kind, samples in times.items():
        ordered = sorted(samples)
        print(f"  {kind:15} median {statistics.median(samples) * 1000:7.1f} ms   "
              f"p90 {ordered[int(len(ordered) * 0.9)] * 1000:7.1f} ms")
    unknown, wrong = (statistics.median(times[kind]) for kind in ("unknown user", "wrong password"))
    print(f"  unknown user / wrong password: {unknown / wrong:.3f}   "
          f"locked out / wrong password: {statistics.median(times['locked out']) / wrong:.3f}")


if __name__ == "__main__":
    main()
