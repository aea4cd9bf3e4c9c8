"""Keystone's v3 API (/identity): tokens, projects and domains, users and groups, roles and their
assignments, and the catalog's regions, services and endpoints."""

from __future__ import annotations

from tether.api.identity import catalog, projects, roles, tokens, users

ROUTERS = (tokens.router, projects.router, users.router, catalog.router, roles.router)
