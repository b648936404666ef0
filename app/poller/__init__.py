"""The status poller: keeps job rows in step with Slurm."""
