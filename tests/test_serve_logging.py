"""What `tether serve` logs: a line per request and per state change, where the operator asked.

Each test runs the real server process and drives it with the real clients; the log is read back
as an operator reads it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.live import LiveCloud, start

ACCESS = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \d+ INFO tether\.access "
    r"\[(?P<request>req-[0-9a-f-]{36}) (?P<user>\S+) (?P<project>\S+) - - -\] "
    r'(?P<client>\S+) "(?P<method>[A-Z]+) (?P<target>\S+)" status: (?P<status>\d{3}) len: (?P<len>\d+) '
    r"time: (?P<time>\d+\.\d{7})$"
)


def token(cloud: LiveCloud, user: str = "admin") -> dict:
    auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"name": "Default"}, "password": user}}},
        "scope": {"project": {"name": user, "domain": {"name": "Default"}}}}}
    answer = httpx.post(f"{cloud.base_url}/identity/v3/auth/tokens", json=auth, timeout=60)
    assert answer.status_code == 201, answer.text
    body = answer.json()["token"]
    return {"id": answer.headers["X-Subject-Token"], "user": body["user"]["id"], "project": body["project"]["id"]}


def access_lines(path: Path) -> dict[str, re.Match[str]]:
    return {match["request"]: match for match in map(ACCESS.match, path.read_text().splitlines()) if match}


def test_a_log_file_has_a_line_per_request_and_per_state_change_each_naming_its_request(tmp_path: Path) -> None:
    log_file = tmp_path / "tether.log"
    cloud = start(tmp_path / "cloud", "--log-file", str(log_file))
    try:
        demo = token(cloud, "demo")
        answer = httpx.get(f"{cloud.base_url}/network/v2.0/networks?name=private",
                           headers={"X-Auth-Token": demo["id"]}, timeout=60)
        missing = httpx.get(f"{cloud.base_url}/compute/v2.1/servers/{'0' * 32}",
                            headers={"X-Auth-Token": demo["id"]}, timeout=60)
        server = cloud.cli("server", "create", "--flavor", "baremetal", "--image", "cirros", "--network", "private",
                           "--wait", "-f", "value", "-c", "id", "logged").stdout.strip()
        cloud.cli("server", "delete", "--wait", server)
    finally:
        cloud.stop()

    lines = access_lines(log_file)
    seen = lines[answer.headers["x-openstack-request-id"]]
    assert (seen["user"], seen["project"], seen["client"]) == (demo["user"], demo["project"], "127.0.0.1")
    assert (seen["method"], seen["target"], seen["status"]) == ("GET", "/network/v2.0/networks?name=private", "200")
    assert int(seen["len"]) == len(answer.content)
    refused = lines[missing.headers["x-openstack-request-id"]]
    assert (refused["status"], int(refused["len"])) == ("404", len(missing.content))

    # The build's lines carry the id of the request that asked for it, as nova's do.
    text = log_file.read_text()
    (create,) = [m for m in lines.values() if (m["method"], m["target"]) == ("POST", "/compute/v2.1/servers")]
    built = re.search(rf"INFO tether\.compute \[(\S+) .*\] instance {server}: building/spawning -> active/- \(built\)",
                      text)
    assert built is not None and built[1] == create["request"], text
    assert re.search(rf"instance {server}: active/deleting -> deleted/- \(deleted\)", text), text
    assert re.search(rf"instance {server}: active/- -> active/deleting \(delete\)", text), text
    assert re.search(r"INFO tether\.baremetal \[req-\S+ .*\] node \S+: available -> deploying \(deploy\)", text), text
    assert re.search(r"node \S+: deploying -> active \(done\)", text), text

    # The terminal stayed quiet: the banner, and nothing logged below WARNING.
    printed = cloud.log.read_text()
    assert "Tether http://" in printed
    assert " INFO " not in printed and "tether.access" not in printed, printed


def test_quiet_by_default_and_info_on_the_terminal_when_asked(tmp_path: Path, live_cloud: LiveCloud) -> None:
    httpx.get(f"{live_cloud.base_url}/compute/v2.1", timeout=60)
    assert "tether.access" not in live_cloud.log.read_text()

    cloud = start(tmp_path / "cloud", "--log-level", "INFO")
    try:
        answer = httpx.get(f"{cloud.base_url}/compute/v2.1", timeout=60)
    finally:
        cloud.stop()
    line = access_lines(cloud.log)[answer.headers["x-openstack-request-id"]]
    assert (line["user"], line["project"], line["status"]) == ("-", "-", "200")


def test_a_log_file_moved_away_by_logrotate_is_made_again(tmp_path: Path) -> None:
    log_file = tmp_path / "tether.log"
    cloud = start(tmp_path / "cloud", "--log-file", str(log_file))
    try:
        before = httpx.get(f"{cloud.base_url}/compute/v2.1", timeout=60)
        # the line is written once the answer is sent: logrotate moves the file after lines, not between
        deadline = time.monotonic() + 30
        while before.headers["x-openstack-request-id"] not in access_lines(log_file):
            assert time.monotonic() < deadline, log_file.read_text()
            time.sleep(0.02)
        log_file.rename(tmp_path / "tether.log.1")
        after = httpx.get(f"{cloud.base_url}/compute/v2.1", timeout=60)
    finally:
        cloud.stop()
    assert before.headers["x-openstack-request-id"] in access_lines(tmp_path / "tether.log.1")
    assert after.headers["x-openstack-request-id"] in access_lines(log_file)


def test_a_log_file_it_cannot_write_is_one_line_and_exit_2_before_anything_is_made(tmp_path: Path) -> None:
    data_dir = tmp_path / "cloud"
    result = subprocess.run(
        [sys.executable, "-m", "tether.cli", "serve", "--port", "0", "--data-dir", str(data_dir),
         "--log-file", str(tmp_path / "no" / "such" / "dir" / "tether.log")],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result
    (line,) = result.stderr.strip().splitlines()
    assert "cannot write the log file" in line and "No such file or directory" in line, line
    assert not data_dir.exists()
