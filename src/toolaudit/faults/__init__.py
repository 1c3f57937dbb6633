"""faults audit."""
