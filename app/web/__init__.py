"""Server-rendered pages (HTMX): sign-in, job templates and submit forms."""
