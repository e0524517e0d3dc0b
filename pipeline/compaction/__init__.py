"""Compaction: token accounting, cut points and preparation (pi 0.84.0's rules, or pi 1.x's where the profile says so), with every word from the profile.

Typical use::

    from pipeline import compile_profile
    from pipeline.compaction.driver import compact
    from pipeline.compaction.engine import make_summary_client, plan_session
    from pipeline.session import SessionFile

    profile = compile_profile("default").profile
    session = SessionFile.open("chat.jsonl")
    plan = plan_session(session, profile.compaction)        # CompactionPlan | NothingToCompact
    client = make_summary_client(profile, profile.summarizer)   # offline by default
    done = compact(session, profile, client)                # a CompactionOutcome: the entry, a mask, or why not

Stages (one module each): :mod:`~pipeline.compaction.tokens` (estimates, threshold),
:mod:`~pipeline.compaction.cut` (cut points, turn starts), :mod:`~pipeline.compaction.plan`
(the frozen :class:`CompactionPlan`), :mod:`~pipeline.compaction.serialize` (the
conversation as text), :mod:`~pipeline.compaction.fileops` (file lists),
:mod:`~pipeline.compaction.summary_schema` (``${schema}`` and the schema check),
:mod:`~pipeline.compaction.requests` (summary requests),
:mod:`~pipeline.compaction.summarize` (running the calls),
:mod:`~pipeline.compaction.branch` (branch summaries),
:mod:`~pipeline.compaction.engine` (sessions end to end),
:mod:`~pipeline.compaction.strategies` (masking), :mod:`~pipeline.compaction.driver` (the one
driver every caller compacts through: model overrides, strategy, one outcome),
:mod:`~pipeline.compaction.offline` (the offline summarizer, the profile's ``summary.offline``).
Overridden settings (``pipeline compact --reserve``) are the profile front end's business:
``compile_profile(source, overrides={"compaction.reserve_tokens": 8000})``.

The package re-exports nothing: each name is imported from the module that defines it, so
a start that needs only the token estimate (the compaction check) imports none of the
summary machinery.
"""
