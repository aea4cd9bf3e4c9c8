"""The fake hypervisor is hardware: its guests, their power state and console outlive a control plane's
restart through its journal, whichever way an earlier Tether wrote that journal."""

from __future__ import annotations

from pathlib import Path

from tether.drivers.hypervisor import RUNNING, SHUTDOWN, FakeHypervisor
from tether.drivers.journal import Journal


def test_a_guest_its_power_and_console_survive_a_restart_and_go_with_it(tmp_path: Path) -> None:
    path = tmp_path / "hypervisor.journal"
    first = FakeHypervisor(path)
    first.create_domain("compute-1", "vm-1")
    first.set_power("compute-1", "vm-1", SHUTDOWN, "stop")
    console = first.console_log("compute-1", "vm-1")
    assert console[-1] == "reboot: Power down"

    again = FakeHypervisor(path)
    assert again.domains() == [("compute-1", "vm-1")]
    assert again.power("compute-1", "vm-1") == SHUTDOWN
    assert again.console_log("compute-1", "vm-1") == console

    again.destroy_domain("compute-1", "vm-1")
    gone = FakeHypervisor(path)
    assert (gone.domains(), gone.console_log("compute-1", "vm-1")) == ([], [])


def test_a_journal_with_power_and_console_records_of_their_own_still_loads_and_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "hypervisor.journal"
    older = Journal(path)  # as Tether wrote it before a guest's record held its power and console
    older.put("domain/compute-1/vm-1", ["compute-1", "vm-1"])
    older.put("power/compute-1/vm-1", ["compute-1", "vm-1", RUNNING])
    older.put("console/compute-1/vm-1", ["compute-1", "vm-1", ["cirros login:"]])

    loaded = FakeHypervisor(path)
    assert loaded.power("compute-1", "vm-1") == RUNNING
    assert loaded.console_log("compute-1", "vm-1") == ["cirros login:"]
    loaded.set_power("compute-1", "vm-1", SHUTDOWN, "stop")

    # the older records must not win over the new one on the next load
    reloaded = FakeHypervisor(path)
    assert reloaded.power("compute-1", "vm-1") == SHUTDOWN
    assert reloaded.console_log("compute-1", "vm-1")[-1] == "reboot: Power down"
    reloaded.destroy_domain("compute-1", "vm-1")
    assert set(Journal(path).load()) == set()
