"""Job templates: parameter schemas, safe rendering into a JobRequest, and versioned storage."""
