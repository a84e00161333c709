"""API functions written once, on top of other API functions of the same engine.

Some API names compute the same thing on every engine out of the engine's other
API functions (``batch_set_value`` is ``set_value`` on each pair). Each is written
here once. The module of an engine that defines the name (its section's module, e.g.
``<engine>_backend/functions.py``) binds it to itself by passing the module, which holds the
engine-level functions it reads (not the checked public ones; imported from their sections
where they are defined elsewhere)::

    _K = sys.modules[__name__]
    batch_set_value = generic.batch_set_value(_K)

Each call returns a new function object, so that every engine's function carries
its own docstring and engine note (``keras_backend.api.install``). The functions
look the engine's functions up when they run, so the module may bind them before it
defines those.
"""


def batch_set_value(K):
    """The API's ``batch_set_value`` on the engine whose functions module ``K`` holds:
    ``K.set_value`` of each ``(variable, value)`` pair, in order (the shared checks
    have refused a bad pair before any value is written)."""
    def batch_set_value(tuples):
        for x, value in tuples:
            K.set_value(x, value)
    return batch_set_value


def get_variable_shape(K):
    """The API's ``get_variable_shape`` on ``K``: ``K.int_shape`` of the variable."""
    def get_variable_shape(x):
        return K.int_shape(x)
    return get_variable_shape


def unchanged(name, why):
    """The API's ``symbolic`` or ``eager`` (``name``) on an engine with one mode only:
    ``func`` returned unchanged; ``why`` (the engine note) says why."""
    def decorator(func):
        return func
    decorator.__name__ = name
    decorator.__doc__ = why
    return decorator


def unrolled_rnn(K, step_function, inputs, initial_states, go_backwards=False, mask=None,
                 constants=None, steps=None):
    """The ``rnn(..., unroll=True)`` loop on the engine whose functions module ``K`` holds.

    Calls ``step_function`` once per time step in Python (``steps`` steps, the static
    time length), so the graph holds one copy of the step per time step. Where
    ``mask`` (``(batch, time)``, nonzero = keep) is 0, the step's output repeats the
    previous output (zeros before the first) and the states keep their values, as
    Keras 2.3.1's backends do. Returns ``(last_output, outputs, new_states)`` with
    ``outputs`` of shape ``(batch, time, ...)`` in the order of the steps taken.
    The caller has checked the ranks and knows ``steps``.
    """
    constants = list(constants or [])
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    states = list(initial_states)
    outputs, prev = [], None
    for t in order:
        out, new_states = step_function(inputs[:, t], states + constants)
        new_states = list(new_states)
        if mask is not None:
            keep = mask[:, t]
            if prev is None:
                prev = K.zeros_like(out)
            out = K.switch(keep, out, prev)
            new_states = [K.switch(keep, ns, s) for s, ns in zip(states, new_states)]
        outputs.append(out)
        prev = out
        states = new_states
    return outputs[-1], K.stack(outputs, axis=1), states


#: the message of ctc_batch_cost's run-time check (checks.runtime_check_message), ending
#: with the mark that checks.engine_error cuts the engine's own text at
CTC_TOO_SHORT = ('a label sequence needs more time steps than its input has: its '
                 'label_length, plus one blank between each pair of equal neighbouring '
                 'labels, is more than its input_length |')


class namespace(object):
    """The engine-level functions of several section modules of one engine as one ``K``
    (a name is looked up in the modules in order, when it is used), for the functions of
    this module that a section module binds to functions of other sections.

    Example:
        >>> _steps = generic.ctc_steps_needed(generic.namespace(tensors, shapes, math))
        ...                                                     # doctest: +SKIP
    """

    def __init__(self, *modules):
        self._modules = modules

    def __getattr__(self, name):
        for module in self._modules:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)


def ctc_steps_needed(K):
    """The time steps each CTC label sequence needs on ``K`` (TensorFlow's rule: its
    ``label_length`` plus one blank between each pair of equal neighbours among its first
    ``label_length`` labels), as a ``(batch, 1)`` tensor of ``y_true``'s kind of int (float
    on CNTK). Compared with ``input_length`` by each engine's ``ctc_batch_cost``, which
    raises ``ValueError`` at run time where a sequence does not fit."""
    def ctc_steps_needed(y_true, label_length):
        y = K.cast(y_true, 'int32')
        length = K.cast(K.reshape(label_length, (-1, 1)), 'int32')
        width = K.int_shape(y_true)[1]
        if width is not None and width < 2:
            return length
        same = K.cast(K.equal(y[:, 1:], y[:, :-1]), 'int32')
        stop = width if width is not None else K.shape(y)[1]
        position = K.expand_dims(K.arange(1, stop, dtype='int32'), 0)
        inside = K.cast(K.less(position, length), 'int32')
        return length + K.sum(same * inside, axis=1, keepdims=True)
    return ctc_steps_needed
