"""Adapters: a profile's system prompt and compaction policy inside other agent frameworks.

One module per framework, each an optional extra; importing a module imports its framework
(and says which extra to install when it is missing):

* :mod:`pipeline.adapters.pydantic_ai` (``context-pipeline[pydantic-ai]``): a capability
  giving the agent the profile's instructions and compacting its history;
* :mod:`pipeline.adapters.openai_agents` (``context-pipeline[openai-agents]``): dynamic
  instructions, a ``call_model_input_filter`` and a ``Session`` stored as pi's JSONL;
* :mod:`pipeline.adapters.langchain` (``context-pipeline[langchain]``): an
  ``AgentMiddleware`` for LangChain v1's ``create_agent``.

All three sit on :class:`~pipeline.adapters._bridge.ContextBridge`, which records the
conversation as a pi session and asks the facade for the prompt, the compaction check and
the compaction itself (the profile's summarizer), and recovers from a context overflow as
our own loop does (:meth:`~pipeline.adapters._bridge.ContextBridge.recover`, called from
each framework's hook around a model call).
"""

from pipeline.adapters._bridge import Compaction, ContextBridge

__all__ = ["Compaction", "ContextBridge"]
