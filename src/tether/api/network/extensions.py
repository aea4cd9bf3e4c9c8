"""GET /v2.0/extensions: the neutron extensions whose behaviour Tether really has, nothing more.

Clients decide what to send from this list (the CLI asks for
``tag-ports-during-bulk-creation`` before it sends tags with a port), so an
alias here is a promise. Names, descriptions and dates are neutron's own.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from tether.api import paths
from tether.api.deps import caller
from tether.api.network.errors import HTTPNotFound
from tether.services.context import RequestContext

router = paths.router("network")

# (alias, name, description, updated)
EXTENSIONS = (
    ("binding", "Port Binding", "Expose port bindings of a virtual port to external application",
     "2014-02-03T10:00:00-00:00"),
    ("provider", "Provider Network", "Expose mapping of virtual networks to physical networks",
     "2012-09-07T10:00:00-00:00"),
    ("external-net", "Neutron external network", "Adds external network attribute to network resource.",
     "2013-01-14T10:00:00-00:00"),
    ("net-mtu", "Network MTU", "Provides MTU attribute for a network resource.", "2015-03-25T10:00:00-00:00"),
    ("net-mtu-writable", "Network MTU (writable)", "Provides a writable MTU attribute for a network resource.",
     "2017-07-12T00:00:00-00:00"),
    ("standard-attr-timestamp", "Resource timestamps",
     "Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.",
     "2016-09-12T10:00:00-00:00"),
    ("standard-attr-description", "standard-attr-description",
     "Extension to add descriptions to standard attributes", "2016-02-10T10:00:00-00:00"),
    ("port-mac-address-regenerate", "Neutron Port MAC address regenerate", "Network port MAC address regenerate",
     "2018-05-03T10:00:00-00:00"),
    ("project-id", "project_id field enabled", "Extension that indicates that project_id field is enabled.",
     "2016-09-09T09:09:09-09:09"),
    ("filter-validation", "Filter parameters validation", "Provides validation on filter parameters.",
     "2018-07-04T10:00:00-00:00"),
    ("empty-string-filtering", "Empty String Filtering Extension",
     "Allow filtering by attributes with empty string value", "2018-05-01T10:00:00-00:00"),
    ("pagination", "Pagination support", "Extension that indicates that pagination is enabled.",
     "2016-06-12T00:00:00-00:00"),
    ("sorting", "Sorting support", "Extension that indicates that sorting is enabled.",
     "2016-06-12T00:00:00-00:00"),
    ("security-group", "security-group", "The security groups extension.", "2012-10-05T10:00:00-00:00"),
    ("stateful-security-group", "Stateful security group", "Indicates if the security group is stateful or not",
     "2019-11-26T09:00:00-00:00"),
    ("port-security", "Port Security", "Provides port security", "2012-07-23T10:00:00-00:00"),
    ("allowed-address-pairs", "Allowed Address Pairs", "Provides allowed address pairs",
     "2013-07-23T10:00:00-00:00"),
    ("extra_dhcp_opt", "Neutron Extra DHCP options",
     "Extra options configuration for DHCP. For example PXE boot options to DHCP clients can be specified "
     "(e.g. tftp-server, server-ip-address, bootfile-name)", "2013-03-17T12:00:00-00:00"),
    ("router", "Neutron L3 Router", "Router abstraction for basic L3 forwarding between L2 Neutron networks and "
     "access to external networks via a NAT gateway.", "2012-07-20T10:00:00-00:00"),
    ("ext-gw-mode", "Neutron L3 Configurable external gateway mode",
     "Extension of the router abstraction for specifying whether SNAT should occur on the external gateway",
     "2013-03-28T10:00:00-00:00"),
    ("extraroute", "Neutron Extra Route", "Extra routes configuration for L3 router", "2013-02-01T10:00:00-00:00"),
    ("quotas", "Quota management support", "Expose functions for quotas management per project",
     "2012-07-29T10:00:00-00:00"),
    ("quota_details", "Quota details management support",
     "Expose functions for quotas usage statistics per project", "2017-02-10T10:00:00-00:00"),
    ("agent", "agent", "The agent management extension.", "2013-02-03T10:00:00-00:00"),
    ("ip-substring-filtering", "IP address substring filtering",
     "Provides IP address substring filtering when listing ports", "2017-11-28T09:00:00-00:00"),
    ("standard-attr-tag", "Tag support for resources with standard attribute: subnet, trunk, network_segment_range, "
     "router, network, policy, subnetpool, port, security_group, floatingip",
     "Enables to set tag on resources with standard attribute.", "2017-01-01T00:00:00-00:00"),
)


def _extension(alias: str, name: str, description: str, updated: str) -> dict[str, Any]:
    return {"name": name, "alias": alias, "description": description, "updated": updated, "links": []}


BY_ALIAS = {entry[0]: _extension(*entry) for entry in EXTENSIONS}


@router.get("/extensions")
async def list_extensions(ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    return {"extensions": list(BY_ALIAS.values())}


@router.get("/extensions/{alias}")
async def show_extension(alias: str, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    if alias not in BY_ALIAS:
        raise HTTPNotFound(f"Extension with alias {alias} does not exist")
    return {"extension": BY_ALIAS[alias]}
