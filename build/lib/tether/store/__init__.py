"""Persistence: tables, the unit of work, durable intents. SQLite by default, PostgreSQL to scale."""
