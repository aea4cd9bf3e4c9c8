"""Keystone's v3 API (/identity): tokens, projects and domains, users and groups, roles and their
assignments, the catalog's regions, services and endpoints, credentials (and OS-EC2), OAuth1 consumers,
domain configurations, OS-INHERIT's inherited grants, policies and endpoint groups."""

from __future__ import annotations

from tether.api.identity import (
    catalog,
    credentials,
    domain_configs,
    endpoint_groups,
    inherited_grants,
    oauth1,
    policies,
    projects,
    roles,
    tokens,
    users,
)

ROUTERS = (tokens.router, domain_configs.router, projects.router, users.router, catalog.router, roles.router,
           inherited_grants.router, credentials.router, oauth1.router, policies.router, endpoint_groups.router)
