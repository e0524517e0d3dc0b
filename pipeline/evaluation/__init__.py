"""Review tooling for compaction: generated sessions with planted facts, quality measures
(``pipeline eval``) and what a profile change would do across an archive (``pipeline replay``).

Above the facade: it compiles nothing itself but takes compiled profiles, and runs the
compaction stage's strategies on private copies of sessions.
"""
