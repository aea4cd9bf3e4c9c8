"""One handler per resource type."""
