"""Slurm implementation of the scheduler interface: argv builders, parsers, transports."""
