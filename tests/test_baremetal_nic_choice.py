"""Choosing a node's NIC for a VIF, as ironic does: pure, no database."""

from __future__ import annotations

import pytest

from tether.domain.baremetal import TENANT_VIF_KEY, NodePort, Portgroup
from tether.domain.baremetal_vifs import attached_vifs, choose_nic, holder_of, local_link_information
from tether.domain.errors import baremetal as be

VIF = "0f0f0f0f-0000-4000-8000-000000000001"
OTHER = "0f0f0f0f-0000-4000-8000-000000000002"


def nic(uuid: str, *, physnet: str | None = None, pxe: bool = True, group: str | None = None,
        vif: str | None = None) -> NodePort:
    return NodePort(
        uuid=uuid, address=f"52:54:00:00:00:{len(uuid):02x}", node_uuid="node", portgroup_uuid=group,
        physical_network=physnet, pxe_enabled=pxe, local_link_connection={"port_id": f"sw-{uuid}"},
        internal_info={TENANT_VIF_KEY: vif} if vif else {},
    )


def group(uuid: str, *, vif: str | None = None) -> Portgroup:
    return Portgroup(uuid=uuid, node_uuid="node", address="52:54:00:aa:aa:aa",
                     internal_info={TENANT_VIF_KEY: vif} if vif else {})


def test_a_vif_never_lands_on_a_nic_of_another_physnet() -> None:
    ports = [nic("a", physnet="physnet1"), nic("b", physnet="physnet2")]
    assert choose_nic(VIF, ports, [], {"physnet2"}).uuid == "b"
    assert choose_nic(VIF, ports, [], {"physnet1"}).uuid == "a"


def test_a_matching_physnet_beats_a_nic_without_one_which_beats_nothing() -> None:
    ports = [nic("none"), nic("match", physnet="physnet1")]
    assert choose_nic(VIF, ports, [], {"physnet1"}).uuid == "match"
    assert choose_nic(VIF, [nic("none"), nic("other", physnet="physnet2")], [], {"physnet1"}).uuid == "none"
    with pytest.raises(be.NoFreePhysicalPorts):
        choose_nic(VIF, [nic("other", physnet="physnet2")], [], {"physnet1"})


def test_an_empty_physnet_set_allows_every_nic() -> None:
    assert choose_nic(VIF, [nic("a", physnet="physnet2")], [], set()).uuid == "a"


def test_pxe_enabled_nics_are_preferred_and_ties_go_to_the_first() -> None:
    ports = [nic("a", pxe=False), nic("b"), nic("c")]
    assert choose_nic(VIF, ports, [], set()).uuid == "b"


def test_a_portgroup_is_preferred_to_a_lone_nic() -> None:
    ports = [nic("lone"), nic("m1", group="pg"), nic("m2", group="pg")]
    chosen = choose_nic(VIF, ports, [group("pg")], set())
    assert isinstance(chosen, Portgroup) and chosen.uuid == "pg"
    assert local_link_information(chosen, ports) == [{"port_id": "sw-m1"}, {"port_id": "sw-m2"}]


def test_a_portgroup_with_one_taken_member_is_unusable_but_its_free_members_are_not() -> None:
    ports = [nic("m1", group="pg", vif=OTHER), nic("m2", group="pg", pxe=False)]
    chosen = choose_nic(VIF, ports, [group("pg")], set())
    assert isinstance(chosen, NodePort) and chosen.uuid == "m2"


def test_empty_and_taken_portgroups_are_ignored() -> None:
    ports = [nic("lone", pxe=False), nic("m1", group="busy")]
    chosen = choose_nic(VIF, ports, [group("empty"), group("busy", vif=OTHER)], set())
    assert chosen.uuid == "lone"


def test_a_portgroup_whose_members_disagree_on_physnet_is_an_error() -> None:
    ports = [nic("m1", group="pg", physnet="physnet1"), nic("m2", group="pg", physnet="physnet2")]
    with pytest.raises(be.PortgroupPhysnetInconsistent) as raised:
        choose_nic(VIF, ports, [group("pg")], {"physnet1", "physnet2"})
    assert str(raised.value) == (
        "Port group pg has member ports with inconsistent physical networks (physnet1, physnet2). "
        "All ports in a port group must have the same physical network."
    )


def test_no_free_nic_raises_ironics_words() -> None:
    with pytest.raises(be.NoFreePhysicalPorts) as raised:
        choose_nic(VIF, [nic("a", vif=OTHER)], [], set())
    assert str(raised.value) == f"Unable to attach VIF {VIF}, not enough free physical ports."
    assert raised.value.status == 400


def test_attaching_a_vif_twice_is_refused() -> None:
    with pytest.raises(be.VifAlreadyAttached) as raised:
        choose_nic(VIF, [nic("free"), nic("a", vif=VIF)], [], set())
    assert str(raised.value) == f"Unable to attach VIF because VIF {VIF} is already attached to Ironic Port a"


def test_a_pinned_nic_is_used_or_nothing() -> None:
    ports = [nic("a"), nic("b", pxe=False)]
    assert choose_nic(VIF, ports, [], set(), port_uuid="b").uuid == "b"
    with pytest.raises(be.NoFreePhysicalPorts):
        choose_nic(VIF, [nic("a"), nic("b", vif=OTHER)], [], set(), port_uuid="b")


def test_the_vif_list_is_read_from_the_nics_and_portgroups() -> None:
    ports = [nic("a", vif=VIF), nic("b"), nic("m1", group="pg")]
    portgroups = [group("pg", vif=OTHER)]
    assert attached_vifs(ports, portgroups) == [VIF, OTHER]
    assert holder_of(OTHER, ports, portgroups).uuid == "pg"
    assert holder_of("nope", ports, portgroups) is None
