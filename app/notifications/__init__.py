"""Job notifications: per-user rules, an outbox written with each state change, delivery."""
