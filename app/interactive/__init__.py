"""Interactive apps (JupyterLab first) that run as Slurm jobs and are reached through the portal."""
