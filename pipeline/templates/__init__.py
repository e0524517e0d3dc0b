"""templates stage."""
