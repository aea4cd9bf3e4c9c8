"""The OpenStack-compatible HTTP API: one router per service, each with its own error envelope."""
