"""Pausing the cyclic garbage collector while many long-lived objects are built.

Python's collector walks every container object in young, middle and (when enough
survived) full passes. Loading a 100k-entry session builds millions of objects that
all stay alive, so with the collector running the passes over them cost about as much
as the parsing itself. :class:`gc_paused` is used around the bulk builders (loading a
file, projecting a whole path, parsing a template, ``JSON.stringify``) and, by the CLI,
around a whole short-lived command. This is the one place the collector is paused.
"""

from __future__ import annotations

import gc


#: Promote only after building at least this many container objects (a 10k-entry file
#: makes about 75,000): a small build is left to the young collections, and promoting
#: often would keep the process's own young garbage from them.
PROMOTE_MIN = 100_000


class gc_paused:
    """Pause the cyclic garbage collector while building many long-lived objects (a
    context manager; a class rather than a generator, as :func:`pipeline.js.js_json`
    enters it once per value).

    Loading a 100k-entry file creates millions of small objects that all stay alive.
    With the collector running, every one of them would be walked by a young, a middle
    and a full collection pass (about half a second per pass at that size, as much as
    the parsing). With ``promote``, the objects are moved to the oldest generation when
    the pause ends (``gc.freeze()`` + ``gc.unfreeze()``: no pass at all), so only the
    full collections CPython schedules anyway will walk them; only after a large build
    (:data:`PROMOTE_MIN`), and never when the process froze objects itself (unfreezing
    would release its frozen objects too). A short-lived command that keeps the
    collector paused throughout (the CLI) pays nothing; an inner pause changes nothing.
    """

    __slots__ = ("promote", "was_enabled")

    def __init__(self, promote: bool = False) -> None:
        self.promote = promote
        self.was_enabled = False

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            if self.promote and gc.get_count()[0] >= PROMOTE_MIN and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
