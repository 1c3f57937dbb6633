"""leakage audit."""
