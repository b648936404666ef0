"""Jobs: submission, control and the reads the pages and API use."""
