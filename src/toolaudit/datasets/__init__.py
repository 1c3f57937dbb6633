"""Seeded generators of controlled benchmarks."""
