"""A cloud that misbehaves on purpose says so: in its banner, in its log, and on every answer."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.live import start

RULE = "compute.attach_interface.before_driver_attach=sleep:8*1"


def test_an_emulated_bug_and_a_fault_rule_are_announced_and_answered_with(tmp_path: Path) -> None:
    cloud = start(tmp_path / "odd", "--emulate-bug", "zombie-interface-on-attach-race", "--fault", RULE)
    try:
        # the version documents, as a tool discovers the cloud
        answer = httpx.get(f"{cloud.base_url}/identity", follow_redirects=False)
        assert answer.headers["x-tether-emulating"] == f"bug=zombie-interface-on-attach-race, fault={RULE}"
        printed = cloud.log.read_text()
        assert "WARNING emulating upstream bug zombie-interface-on-attach-race: the port-deleted event" in printed
        assert f"WARNING fault rule {RULE}" in printed
        assert f"WARNING tether.serve [-] fault rule {RULE}" in printed  # the log line, beside the banner's
    finally:
        cloud.stop()


def test_a_plain_cloud_says_nothing_of_the_kind(live_cloud) -> None:
    answer = httpx.get(f"{live_cloud.base_url}/identity", follow_redirects=False)
    assert "x-tether-emulating" not in answer.headers
    printed = live_cloud.log.read_text()
    assert "WARNING emulating" not in printed and "WARNING fault rule" not in printed
