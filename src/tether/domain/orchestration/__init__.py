"""Orchestration's pure template layer: HOT templates parsed, checked and evaluated, with no I/O."""
