"""The graph layer of the engines with no graph of their own.

Keras 2 code builds graphs (placeholders, ops on them, ``gradients``,
``function(inputs, outputs, updates)``, a learning phase, variables updated in place); an
eager engine has none, so its adapter keeps a small graph of its own: symbolic nodes with
static shapes worked out at two probe sizes, a session stand-in, pending updates, control
dependencies, the eval cache, the learning phase, ``K.function`` as one callable. What
that machinery does the same way on every such engine is written here once:

* :mod:`.graph`: the node base class (:class:`~.graph.Node`), building nodes
  (:func:`~.graph.apply`, :func:`~.graph.node`), the graph's walk order, the evaluation
  context (:class:`~.graph.Context`), the broadcasting guesses of shape probing, pending
  updates (:class:`~.graph.Update`) and control dependencies, the session stand-in, the
  per-op wrapper ``records_keras_shape``, ``int_shape``;
* :mod:`.function`: the part of ``K.function``'s callable that does not depend on how an
  engine runs a graph (the updates it applies, the feeds and the learning phase);
* :mod:`.sections`: the API functions of the sections (``session``, ``updates``,
  ``locally_connected``, ...) whose logic is the same on every such engine, each bound to
  an adapter's ``core`` module (as :mod:`keras_backend.generic` binds to an engine).

The engine facts stay in each adapter's folder: its array library, its probing of shapes,
its random generators, how a function runs (compiled or op by op). The shared code reads
them from the adapter's ``core`` module (the *engine*, passed in or held by a subclass as
``_engine``), by the names listed in each function's docstring.

This package names no engine, and parses on Python 3.6.
"""
