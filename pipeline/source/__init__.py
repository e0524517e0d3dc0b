"""source stage: profile files -> one merged, positioned tree.

* :mod:`~pipeline.source.reader`: one file -> positioned tree (safe, located errors);
* :mod:`~pipeline.source.chain`: following ``extends:`` (paths, ``builtin:NAME``, cycles);
* :mod:`~pipeline.source.merge`: the overlay rules (deep merge, sections by id);
* :mod:`~pipeline.source.tree`: the tree, :func:`flatten` and the :class:`SourceMap`;
* :mod:`~pipeline.source.locate`: key paths by section id, ``${var}`` positions;
* :mod:`~pipeline.source.load`: the chain read, merged and flattened (:func:`load_merged`).

The package re-exports nothing: each name is imported from the module that defines it.
"""
