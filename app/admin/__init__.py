"""Site administration: users, projects, memberships and import from Slurm associations."""
