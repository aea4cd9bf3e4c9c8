"""The pure model: entities, state machines as tables, typed errors, invariants. No I/O."""
