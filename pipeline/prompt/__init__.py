"""prompt stage."""
