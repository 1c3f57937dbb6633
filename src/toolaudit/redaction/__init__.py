"""redaction audit."""
