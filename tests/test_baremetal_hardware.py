"""The fake hardware: time-based deploy and cleaning, power, a BMC that errors, persistence."""

from __future__ import annotations

import pytest

from tether.domain.baremetal_states import POWER_OFF, POWER_ON
from tether.drivers.hardware import FakeHardware, HardwareError


def test_deploy_and_clean_record_when_they_finish() -> None:
    hardware = FakeHardware(deploy_seconds=10, clean_seconds=5)
    assert hardware.deploy_callback_at("n1") is None
    assert hardware.start_deploy("n1", 100.0) == 110.0
    assert hardware.deploy_callback_at("n1") == 110.0
    assert hardware.start_clean("n1", 200.0) == 205.0
    assert (hardware.clean_started_at("n1"), hardware.clean_done_at("n1")) == (200.0, 205.0)
    # Cleaning wipes the deployed image: no call-back is pending any more.
    assert hardware.deploy_callback_at("n1") is None


def test_zero_seconds_are_allowed_and_negative_ones_are_not() -> None:
    hardware = FakeHardware(deploy_seconds=0, clean_seconds=0)
    assert hardware.start_deploy("n1", 5.0) == 5.0
    with pytest.raises(ValueError):
        FakeHardware(deploy_seconds=-1)


def test_power_is_per_node() -> None:
    hardware = FakeHardware()
    assert hardware.set_power("n1", True) == POWER_ON
    assert (hardware.power_state("n1"), hardware.power_state("n2")) == (POWER_ON, POWER_OFF)


def test_a_bmc_fails_the_number_of_times_it_is_told_to() -> None:
    hardware = FakeHardware()
    hardware.fail("n1", "power", times=2, message="BMC unreachable")
    for _ in range(2):
        with pytest.raises(HardwareError, match="BMC unreachable"):
            hardware.set_power("n1", True)
    assert hardware.power_state("n1") == POWER_OFF
    assert hardware.set_power("n1", True) == POWER_ON
    hardware.fail("n2", "deploy")
    with pytest.raises(HardwareError, match=r"IPMI call failed: deploy\."):
        hardware.start_deploy("n2", 0.0)
    assert hardware.deploy_callback_at("n2") is None
    with pytest.raises(ValueError):
        hardware.fail("n1", "explode")


def test_the_hardware_survives_a_restart_of_the_process(tmp_path) -> None:
    path = tmp_path / "hardware.json"
    hardware = FakeHardware(path=path)
    hardware.set_power("n1", True)
    hardware.start_deploy("n1", 50.0)
    again = FakeHardware(path=path)
    assert again.power_state("n1") == POWER_ON
    assert again.deploy_callback_at("n1") == 60.0
