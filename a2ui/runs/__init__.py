"""Runs: an AG-UI 1.0 run's record, its event log and its stream's lease."""
