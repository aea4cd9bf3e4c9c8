"""How long `tether serve` takes to be ready: from exec to a bare-metal boot that would schedule.

Starts the real `tether` console script N times on a fresh data directory (a first start: it
creates the directory and the SQLite database, seeds the demo cloud, hashes the two demo
passwords and writes clouds.yaml), and each time once more on the same directory (a restart).
For each start it prints:

- the wall seconds from exec to the first answered GET /identity/v3, and the server process's
  CPU seconds (user + system) at that moment, and its main thread's: the critical path, which a
  first start's password hashing runs beside on the other core when that core is free;
- the wall seconds from exec until a bare-metal boot would be scheduled: the later of that first
  answer and the moment the earliest node a boot could land on (available, not in maintenance,
  no instance: what "No valid host" is about) became available, by its provision_updated_at
  (the server's clock is this machine's), so the token the listing needs costs nothing here;
- the latency of the first requests a client makes: a token, then one authenticated GET in each
  service.

The machine is shared, so wall time is noisy: the CPU time says what the start itself costs.

Where PYTHONDONTWRITEBYTECODE is set (as in this repository's sandbox) an editable install
never caches Tether's own bytecode, so every start compiles its ~17,000 lines (~0.3 s of CPU);
the script says so. `python -m compileall -q src` writes the bytecode once despite the setting.

    python bench/startup.py [--runs N] [--tether PATH]

Target on the 2-core machine: a bare-metal boot would schedule in under 1 s (median), first
start and restart alike.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

TARGET_SECONDS = 1.0
POLL_SECONDS = 0.002  # between connection attempts: short, yet the poller leaves the server a core
FIRST_GETS = ("/compute/v2.1/servers", "/network/v2.0/networks", "/image/v2/images", "/baremetal/v1/nodes")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux's /proc), children it waited for included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def main_thread_cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process's main thread so far: a start's critical path, which the
    other threads (the password hashing of a first start) run beside when a core is free."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def request(port: int, method: str, path: str, body: object = None,
            headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    payload = None if body is None else json.dumps(body).encode()
    all_headers = {"Content-Type": "application/json", **(headers or {})} if payload else (headers or {})
    connection.request(method, path, body=payload, headers=all_headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


@dataclass
class Start:
    ready: float  # wall seconds from exec to the first answered request
    cpu: float  # server CPU seconds at that moment
    main_cpu: float  # of which its main thread's
    schedulable: float = 0.0  # wall seconds from exec until a node a boot could land on is listed
    first: dict[str, float] = field(default_factory=dict)  # first requests' latencies, in seconds
    second: dict[str, float] = field(default_factory=dict)  # the same requests again


def start_once(tether: str, data_dir: Path) -> Start:
    port = free_port()
    log = (data_dir.parent / f"{data_dir.name}.log").open("ab")
    started = time.perf_counter()
    started_wall = time.time()
    process = subprocess.Popen([tether, "serve", "--data-dir", str(data_dir), "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        while True:
            try:
                response = request(port, "GET", "/identity/v3")
                ready = time.perf_counter() - started
                cpu = cpu_seconds(process.pid)
                main_cpu = main_thread_cpu_seconds(process.pid)
                if response.status != 200:
                    raise RuntimeError(f"GET /identity/v3 answered {response.status}")
                break
            except ConnectionRefusedError:
                if process.poll() is not None:
                    raise RuntimeError(f"tether serve exited with {process.returncode}") from None
                if time.perf_counter() - started > 60:
                    raise RuntimeError("tether serve did not answer in 60 s") from None
                time.sleep(POLL_SECONDS)
        result = Start(ready, cpu, main_cpu)
        result.schedulable = max(ready, _until_schedulable(port, started_wall))
        for latencies in (result.first, result.second):
            latencies.update(_first_requests(port))
        return result
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


AUTH = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": "admin", "domain": {"name": "Default"}, "password": "admin"}}},
    "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}}


def _token(port: int) -> str:
    response = request(port, "POST", "/identity/v3/auth/tokens", AUTH)
    if response.status != 201:
        raise RuntimeError(f"POST /identity/v3/auth/tokens answered {response.status}")
    return response.getheader("X-Subject-Token") or ""


def _until_schedulable(port: int, started_wall: float) -> float:
    """Seconds from ``started_wall`` (epoch) until the first node a boot could be scheduled on became available."""
    headers = {"X-Auth-Token": _token(port), "X-OpenStack-Ironic-API-Version": "1.80"}
    while True:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/baremetal/v1/nodes?fields=provision_state,provision_updated_at,maintenance,"
                           "instance_uuid",
                           headers=headers)
        response = connection.getresponse()
        body = json.loads(response.read())
        connection.close()
        if response.status != 200:
            raise RuntimeError(f"GET /baremetal/v1/nodes answered {response.status}")
        since = [datetime.fromisoformat(node["provision_updated_at"]).timestamp() for node in body["nodes"]
                 if node["provision_state"] == "available" and not node["maintenance"] and not node["instance_uuid"]]
        if since:
            return min(since) - started_wall
        if time.time() - started_wall > 120:
            raise RuntimeError("no node became available in 120 s")
        time.sleep(POLL_SECONDS)


def _first_requests(port: int) -> dict[str, float]:
    latencies: dict[str, float] = {}
    auth = AUTH
    began = time.perf_counter()
    response = request(port, "POST", "/identity/v3/auth/tokens", auth)
    latencies["POST token"] = time.perf_counter() - began
    if response.status != 201:
        raise RuntimeError(f"POST /identity/v3/auth/tokens answered {response.status}")
    token = response.getheader("X-Subject-Token") or ""
    for path in FIRST_GETS:
        began = time.perf_counter()
        response = request(port, "GET", path, headers={"X-Auth-Token": token})
        latencies[f"GET {path}"] = time.perf_counter() - began
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}")
    return latencies


def bytecode_state(tether: str) -> str:
    """How many of Tether's modules the server will load from cached bytecode rather than compile."""
    python = Path(tether).with_name("python")
    if not python.exists():
        python = Path(sys.executable)
    # Asked of the measured installation's own interpreter: it may be another one than this.
    result = subprocess.run([str(python), __file__, "--bytecode-state"], capture_output=True, text=True)
    return result.stdout.strip() or f"cannot tell: {result.stderr.strip()[-200:]}"


def _bytecode_state_here() -> str:
    spec = importlib.util.find_spec("tether")
    if spec is None or not spec.submodule_search_locations:
        return "tether is not importable from here"
    sources = list(Path(spec.submodule_search_locations[0]).rglob("*.py"))
    cached = 0
    for source in sources:
        compiled = Path(importlib.util.cache_from_source(str(source)))
        # A timestamp-based .pyc records its source's mtime and size (PEP 552); a stale one is recompiled.
        if compiled.exists():
            header = compiled.read_bytes()[8:16]
            stat = source.stat()
            if header == (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + \
                    (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"):
                cached += 1
    setting = "set" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "not set"
    return f"tether modules with cached bytecode: {cached}/{len(sources)} (PYTHONDONTWRITEBYTECODE {setting})"


def _summary(label: str, starts: list[Start]) -> None:
    ready = [s.ready for s in starts]
    cpu = [s.cpu for s in starts]
    main_cpu = [s.main_cpu for s in starts]
    schedulable = [s.schedulable for s in starts]
    verdict = "meets" if statistics.median(schedulable) < TARGET_SECONDS else "MISSES"
    print(f"{label:<12} answers: wall median {statistics.median(ready):5.2f} s  min {min(ready):5.2f} s   "
          f"cpu median {statistics.median(cpu):5.2f} s  min {min(cpu):5.2f} s   "
          f"main thread's cpu median {statistics.median(main_cpu):5.2f} s")
    print(f"{'':<12} a bare-metal boot would schedule: wall median {statistics.median(schedulable):5.2f} s  "
          f"min {min(schedulable):5.2f} s  max {max(schedulable):5.2f} s   "
          f"({verdict} the {TARGET_SECONDS:.0f} s target)")
    for name in starts[0].first:
        first = [s.first[name] * 1000 for s in starts]
        second = [s.second[name] * 1000 for s in starts]
        print(f"    {name:<32} first {statistics.median(first):6.1f} ms   again {statistics.median(second):6.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="First starts, each followed by a restart.")
    parser.add_argument("--tether", default=str(Path(sys.executable).with_name("tether")),
                        help="The tether console script (default: the one beside this Python).")
    parser.add_argument("--bytecode-state", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bytecode_state:
        print(_bytecode_state_here())
        return 0
    print(bytecode_state(args.tether))
    first: list[Start] = []
    again: list[Start] = []
    with tempfile.TemporaryDirectory(prefix="tether-startup-") as scratch:
        for run in range(args.runs):
            data_dir = Path(scratch) / f"run{run}"
            for kind, starts in (("first start", first), ("restart", again)):
                start = start_once(args.tether, data_dir)
                starts.append(start)
                print(f"run {run + 1} {kind:<11} answers {start.ready:5.2f} s  cpu {start.cpu:5.2f} s "
                      f"(main thread {start.main_cpu:4.2f} s)  "
                      f"schedulable {start.schedulable:5.2f} s", flush=True)
    print()
    _summary("first start", first)
    _summary("restart", again)
    return 0


if __name__ == "__main__":
    sys.exit(main())
