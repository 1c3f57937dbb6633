"""probes audit."""
