"""Checkpoints, fault injection, the deterministic scheduler and the scenario library."""
