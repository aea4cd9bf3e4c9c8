"""Tether: an OpenStack-compatible control plane that does not leak."""

__version__ = "0.1.0"
