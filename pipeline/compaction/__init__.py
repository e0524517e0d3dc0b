"""compaction stage."""
