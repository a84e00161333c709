"""``K.function``'s callable on an eager engine: what does not depend on how the engine runs
the graph (see the package's docstring).

An adapter subclasses :class:`Function`, sets ``_engine`` (its ``core`` module:
``_make_update``, ``_LEARNING_PHASE``, ``_feed_value(value, dtype)``, ``_THIS``, the module
``checks.feed_specs`` reads) and ``_errors`` (the exceptions of a failed run, reported as
the engine's error), and defines ``_prepare(nodes, **kwargs)`` (what it makes of the graph's
nodes, leaves first), ``_run(fed, phase) -> (outputs, new values)`` and
``_finish(outputs, news) -> outputs`` (the variables written, the outputs as numpy).
"""
import numpy as np

from .. import checks, common
from . import graph


class Function(object):
    """A function of the graph: its inputs, outputs and updates (one per variable, the
    updates it comes after first), the gradient nodes, the learning phase's place."""
    _engine = None
    _errors = (TypeError, ValueError)

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        engine = self._engine
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.name = name
        self.api_name = 'function'
        self._feed_specs = None
        self._feed_dtypes = None
        pairs = []
        for u in graph.flat_updates(updates):
            if isinstance(u, graph.Update):
                pairs.append(u)
            elif isinstance(u, (list, tuple)) and len(u) == 2:
                pairs.append(engine._make_update(u[0], u[1]))
            else:
                raise ValueError('function: each update must be a (variable, new_value) '
                                 'pair, got %r' % (u,))
        pairs = graph.with_control_updates(self.outputs, pairs)
        # later updates of the same variable win
        by_var = {}
        for p in pairs:
            by_var[p.variable.id] = p
        self.updates = list(by_var.values())
        roots = [o for o in self.outputs if isinstance(o, graph.Node)] + \
            [p.new_value for p in self.updates if isinstance(p.new_value, graph.Node)]
        nodes = graph.walk(roots)
        self._updated = [p.variable for p in self.updates]
        self._update_values = [p.new_value for p in self.updates]
        # gradients first: their pass hands the forward values to the context, which the
        # other updates (BatchNormalization's moving averages) and the outputs then reuse
        self._gradient_nodes = [n for n in nodes if getattr(n.op, 'hands_forward', False)]
        self._lp_index = None
        for i, t in enumerate(self.inputs):
            if t is engine._LEARNING_PHASE:
                self._lp_index = i
        self._fed = [t for t in self.inputs if t is not engine._LEARNING_PHASE]
        self._prepare(nodes, **kwargs)

    def _prepare(self, nodes, **kwargs):
        pass

    def _feed_dtype(self, t):
        """The dtype a fed value of input ``t`` (a node) is given."""
        return t.dtype

    def _phase_of(self, v):
        """A fed learning phase as an int."""
        return int(np.asarray(v))

    def __call__(self, inputs):
        engine = self._engine
        inputs = checks.checked_feeds(self, engine._THIS, inputs)
        if self._feed_dtypes is None:
            self._feed_dtypes = [self._feed_dtype(t) if isinstance(t, graph.Node) else None
                                 for t in self.inputs]
        phase = None
        fed = []
        for i, (dt, v) in enumerate(zip(self._feed_dtypes, inputs)):
            if i == self._lp_index:
                phase = self._phase_of(v)
                continue
            fed.append(engine._feed_value(v, dt))
        fixed = common._fixed_learning_phase()
        if phase is None and fixed is not None:
            phase = fixed
        try:
            outs, news = self._run(fed, phase)
        except self._errors as e:
            if isinstance(e, ValueError) and 'placeholder' in str(e):
                raise
            raise checks.engine_error(self.api_name, e, [np.shape(v) for v in inputs]) from e
        outs = self._finish(outs, news)
        return outs[0] if self._single else outs
