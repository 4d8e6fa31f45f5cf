"""Deterministic calculators: pure functions with pydantic inputs and outputs."""
