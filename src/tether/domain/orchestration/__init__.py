"""Orchestration (heat): templates, stacks and their resources, as pure data and rules."""
