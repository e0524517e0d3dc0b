"""LLM client layer: send a summary request, get a completion back.

Provider-neutral types (:class:`SummaryRequest`, :class:`Completion`; usage is :class:`pipeline.session.Usage`),
two HTTP wire formats on httpx (:class:`OpenAIChatClient`, :class:`AnthropicMessagesClient`),
one retry policy (:mod:`pipeline.llm.retry`) and :func:`make_client`. Every provider format is
built and read in one place, the wire layer :mod:`pipeline.llm.wire` (standard library only).
This package only transports what the caller gives: it holds no prompt text. It re-exports
nothing: each name is imported from the module that defines it (``pipeline.llm.errors``,
``pipeline.llm.types``...), so a start pays only for the modules it uses.
"""
