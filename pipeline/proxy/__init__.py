"""``pipeline proxy``: the profile enforced on the wire, between coding agents and their providers.

* :mod:`.routes`: which provider a request is for and its upstream URL;
* :mod:`.app`: the ASGI application (route, token, body, policy, forward, stream back);
* :mod:`.shapes`: the proxy's own errors in each provider's error shape;
* :mod:`.store`: counters, conversations and summaries in SQLite;
* :mod:`.serve`: binding and serving with uvicorn (the ``proxy`` extra);
* :mod:`.command`: the command's flags turned into settings.

See docs/proxy.md.
"""
