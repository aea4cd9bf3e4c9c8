"""Nova's API (/compute/v2.1): one small module per resource."""

from tether.api.compute import (
    actions,
    aggregates,
    availability_zones,
    compute_services,
    diagnostics,
    events,
    flavor_settings,
    flavors,
    floating_ip_proxies,
    hosts,
    hypervisors,
    images,
    interfaces,
    keypairs,
    network_proxies,
    quotas,
    security_group_proxies,
    server_actions,
    server_details,
    server_groups,
    servers,
    tenant_usage,
    usage_audit_log,
)

ROUTERS = (*(module.router for module in (servers, interfaces, actions, diagnostics, events, flavors, hypervisors,
                                          keypairs, quotas, availability_zones, compute_services, aggregates,
                                          server_groups, flavor_settings, server_actions, server_details, images,
                                          tenant_usage, usage_audit_log, network_proxies, security_group_proxies,
                                          floating_ip_proxies, hosts)),
           server_actions.console_pages)
