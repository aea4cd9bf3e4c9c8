"""Keystone's domain-specific configuration: which options a domain may set, their defaults, and the
rules for creating, reading, updating and deleting them (keystone's ``DomainConfigManager``), as pure
functions over ``{group: {option: value}}`` dicts.

Only the options that shape a domain's identity driver may be set, each named explicitly, so that an
option added to the server's own configuration never becomes settable per domain by accident.
"""

from __future__ import annotations

import copy
from typing import Any

from tether.domain.errors import identity as errors

# keystone's whitelisted options, with the defaults of its own [identity] and [ldap] configuration
DEFAULTS: dict[str, dict[str, Any]] = {
    "identity": {"driver": "sql", "list_limit": None},
    "ldap": {
        "url": "ldap://localhost", "user": None, "suffix": "cn=example,cn=com", "query_scope": "one",
        "page_size": 0, "alias_dereferencing": "default", "debug_level": None, "chase_referrals": None,
        "user_tree_dn": None, "user_filter": None, "user_objectclass": "inetOrgPerson",
        "user_id_attribute": "cn", "user_name_attribute": "sn", "user_mail_attribute": "mail",
        "user_description_attribute": "description", "user_pass_attribute": "userPassword",
        "user_enabled_attribute": "enabled", "user_enabled_invert": False, "user_enabled_mask": 0,
        "user_enabled_default": "True", "user_attribute_ignore": ["default_project_id"],
        "user_default_project_id_attribute": None, "user_enabled_emulation": False,
        "user_enabled_emulation_dn": None, "user_enabled_emulation_use_group_config": False,
        "user_additional_attribute_mapping": [], "group_tree_dn": None, "group_filter": None,
        "group_objectclass": "groupOfNames", "group_id_attribute": "cn", "group_name_attribute": "ou",
        "group_members_are_ids": False, "group_member_attribute": "member",
        "group_desc_attribute": "description", "group_attribute_ignore": [],
        "group_additional_attribute_mapping": [], "tls_cacertfile": None, "tls_cacertdir": None,
        "use_tls": False, "tls_req_cert": "demand", "use_pool": True, "pool_size": 10, "pool_retry_max": 3,
        "pool_retry_delay": 0.1, "pool_connection_timeout": -1, "pool_connection_lifetime": 600,
        "use_auth_pool": True, "auth_pool_size": 100, "auth_pool_connection_lifetime": 60,
    },
}
# options stored but never read back
SENSITIVE: dict[str, tuple[str, ...]] = {"identity": (), "ldap": ("password",)}

Config = dict[str, dict[str, Any]]


def is_sensitive(group: str, option: str) -> bool:
    return option in SENSITIVE.get(group, ())


def check_group_and_option(group: str | None, option: str | None) -> None:
    """keystone's ``_assert_valid_group_and_option``: a 403 naming what is not supported."""
    if group is None:
        return
    if group not in DEFAULTS and group not in SENSITIVE:
        raise errors.InvalidDomainConfig(reason=f"Group {group} is not supported for domain specific configurations")
    if option is not None and option not in DEFAULTS.get(group, {}) and not is_sensitive(group, option):
        raise errors.InvalidDomainConfig(
            reason=f"Option {option} in group {group} is not supported for domain specific configurations")


def check_config(config: Any) -> Config:
    """keystone's ``_assert_valid_config``: some options, each group a non-empty dict of supported options."""
    if not config or not isinstance(config, dict):
        raise errors.InvalidDomainConfig(reason="No options specified")
    for group, options in config.items():
        if not options or not isinstance(options, dict):
            raise errors.InvalidDomainConfig(
                reason=f"The value of group {group} specified in the config should be a dictionary of options")
        for option in options:
            check_group_and_option(group, option)
    return config


def split(config: Config) -> tuple[Config, Config]:
    """(the options read back, the sensitive ones)."""
    plain: Config = {}
    hidden: Config = {}
    for group, options in config.items():
        for option, value in options.items():
            (hidden if is_sensitive(group, option) else plain).setdefault(group, {})[option] = value
    return plain, hidden


def merged(current: Config, update: Config) -> Config:
    result = copy.deepcopy(current)
    for group, options in update.items():
        result.setdefault(group, {}).update(options)
    return result


def _what(group: str | None, option: str | None) -> str:
    if option is not None:
        return f"option {option} in group {group}"
    if group is not None:
        return f"group {group}"
    return "any options"


def read(domain_id: str, config: Config, group: str | None = None, option: str | None = None) -> dict[str, Any]:
    """keystone's ``get_config``: the whole config, one group, or ``{option: value}``; 404 if absent."""
    check_group_and_option(group, option)
    if group is None:
        if config:
            return copy.deepcopy(config)
    elif option is None:
        if config.get(group):
            return {group: copy.deepcopy(config[group])}
    elif option in config.get(group, {}):
        return {option: copy.deepcopy(config[group][option])}
    raise errors.DomainConfigNotFound(domain_id=domain_id, group_or_option=_what(group, option))


def update(domain_id: str, current: Config, body: Any, group: str | None = None,
           option: str | None = None) -> Config:
    """keystone's ``update_config``: ``body`` merged into ``current`` (options and sensitive ones
    together); with a group or an option, only that one, and it must exist already."""
    if group is not None and option is not None:
        body = {group: body} if isinstance(body, dict) else body
    check_config(body)
    check_group_and_option(group, option)
    if group is not None:
        if len(body) != 1 or (option is not None and len(body[group]) != 1):
            if option is not None:
                reason = (f"Trying to update option {option} in group {group}, so that, and only that, option "
                          f"must be specified  in the config")
            else:
                reason = (f"Trying to update group {group}, so that, and only that, group must be specified in "
                          f"the config")
            raise errors.InvalidDomainConfig(reason=reason)
        if group not in body:
            raise errors.InvalidDomainConfig(
                reason=f"request to update group {group}, but config provided contains group "
                       f"{next(iter(body))} instead")
        if option is not None and option not in body[group]:
            raise errors.InvalidDomainConfig(
                reason=f"Trying to update option {option} in group {group}, but config provided contains option "
                       f"{next(iter(body[group]))} instead")
        existing = current.get(group, {})
        if not existing or (option is not None and option not in existing):
            raise errors.DomainConfigNotFound(domain_id=domain_id, group_or_option=_what(group, option))
    return merged(current, body)


def delete(domain_id: str, current: Config, group: str | None = None, option: str | None = None) -> Config:
    """keystone's ``delete_config``: all of it, a group, or one option (which must exist)."""
    check_group_and_option(group, option)
    if group is None:
        return {}
    existing = current.get(group)
    if not existing:
        raise errors.DomainConfigNotFound(domain_id=domain_id, group_or_option=_what(group, None))
    if option is not None and option not in existing:
        raise errors.DomainConfigNotFound(domain_id=domain_id, group_or_option=_what(group, option))
    result = copy.deepcopy(current)
    if option is None:
        del result[group]
    else:
        del result[group][option]
        if not result[group]:
            del result[group]
    return result


def defaults(group: str | None = None, option: str | None = None) -> dict[str, Any]:
    """keystone's ``get_config_default``: the server's own values of the options a domain may set."""
    check_group_and_option(group, option)
    if group is None:
        return copy.deepcopy(DEFAULTS)
    if option is None:
        return {group: copy.deepcopy(DEFAULTS.get(group, {}))}
    if option not in DEFAULTS.get(group, {}):
        raise errors.InvalidDomainConfig(
            reason=f"Reading the default for option {option} in group {group} is not supported")
    return {option: copy.deepcopy(DEFAULTS[group][option])}
