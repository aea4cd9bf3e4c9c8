"""The outside world, with state of its own that can drift from the database.

A leak is exactly a disagreement between a driver and the database, so the
drivers never share a table with it.
"""
