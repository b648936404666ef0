"""Scheduler library: a small, framework-free interface to batch schedulers (Slurm)."""
