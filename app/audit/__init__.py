"""The audit trail: an append-only record of who did what, from where."""
