"""Collectors (Tether itself, or any cloud through openstacksdk), findings, repair plans, reports."""
