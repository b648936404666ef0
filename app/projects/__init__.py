"""Projects: a Slurm account on one cluster, its members and their roles."""
