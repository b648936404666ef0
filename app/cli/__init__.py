"""``hpcportal``: a command-line client for scripts, speaking only the public JSON API."""
