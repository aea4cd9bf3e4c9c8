"""The network's owner-relation invariants, each tested by planting the disagreement it reports."""

from __future__ import annotations

from tether.domain.invariants import (
    INVARIANTS,
    Snapshot,
    floating_ip_port,
    router_interface,
    security_group_reference,
)
from tether.domain.network import Port
from tether.domain.routers import FloatingIp, Router
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule


def _port(port_id: str, **values) -> Port:
    return Port(id=port_id, name="", network_id="net", project_id="p", mac_address=f"fa:16:3e:00:00:{port_id[-2:]}",
                **values)


def test_each_is_registered() -> None:
    for name, check in (("floating-ip-port", floating_ip_port), ("router-interface", router_interface),
                        ("security-group-reference", security_group_reference)):
        assert INVARIANTS[name] is check


def test_a_floating_ip_whose_port_is_gone() -> None:
    holder = _port("fip-port-01", device_owner="network:floatingip", device_id="fip")
    fip = FloatingIp(id="fip", project_id="p", floating_network_id="public", floating_ip_address="172.24.4.9",
                     floating_port_id=holder.id, port_id="gone-port-02", fixed_ip_address="10.0.0.5")
    snap = Snapshot(now=0, ports=[holder], floating_ips=[fip])
    (violation,) = floating_ip_port(snap)
    assert violation.resources == {"floatingip": "fip", "port": "gone-port-02"}
    fip.port_id = fip.fixed_ip_address = None
    assert floating_ip_port(snap) == []


def test_a_router_interface_on_a_deleted_subnet_and_a_router_port_without_its_router() -> None:
    interface = _port("iface-port-03", device_owner="network:router_interface", device_id="r1")
    interface.fixed_ips = [{"subnet_id": "deleted-subnet", "ip_address": "10.0.0.1"}]
    gateway = _port("gw-port-04", device_owner="network:router_gateway", device_id="gone-router")
    snap = Snapshot(now=0, ports=[interface, gateway], subnet_ids={"other"}, floating_ips=[],
                    routers=[Router(id="r1", name="", project_id="p")])
    found = {(v.resources["port"], v.resources.get("router")) for v in router_interface(snap)}
    assert found == {("iface-port-03", "r1"), ("gw-port-04", "gone-router")}
    snap.subnet_ids = {"deleted-subnet"}
    assert [v.resources["port"] for v in router_interface(snap)] == ["gw-port-04"]


def test_a_rule_or_a_port_naming_a_deleted_group() -> None:
    group = SecurityGroup(id="sg", name="web", project_id="p")
    rule = SecurityGroupRule(id="rule", security_group_id="sg", project_id="p", direction="ingress",
                             remote_group_id="deleted-sg")
    port = _port("port-05", security_group_ids=["sg", "deleted-sg"])
    snap = Snapshot(now=0, ports=[port], security_groups=[group], security_group_rules=[rule])
    assert sorted(v.evidence.split(" ")[0] for v in security_group_reference(snap)) == ["port", "security"]
    snap.security_groups.append(SecurityGroup(id="deleted-sg", name="x", project_id="p"))
    assert security_group_reference(snap) == []


def test_a_collector_that_did_not_read_the_rows_concludes_nothing() -> None:
    port = _port("iface-port-06", device_owner="network:router_interface", device_id="r9",
                 security_group_ids=["unknown"])
    snap = Snapshot(now=0, ports=[port])
    assert router_interface(snap) == [] and security_group_reference(snap) == [] and floating_ip_port(snap) == []
