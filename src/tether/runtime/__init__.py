"""The kernel every operation runs on: clock, checkpoints, faults, locks, bug switches, executors."""
