"""The versioned JSON API (``/api/v1``) for scripts and the command-line client."""
