"""session stage."""
