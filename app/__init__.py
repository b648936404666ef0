"""hpc-portal: a self-hosted web portal and REST API for Slurm clusters."""
