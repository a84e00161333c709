"""Control flow on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.control_flow`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import builtins

import numpy as np

from .core import (C, dtype, _add_axis, _coerce_pair, _drop_axis, _is_engine_tensor, _keras_meta,
                   _nd, _op, _reshape, _shape_arg, _static_shape, _SWIG, _to_tensor, _var)
from .session import learning_phase
from .shapes import reverse


#: the name prefix of the sequence axes ``rnn`` makes (``C.to_sequence``'s default)
_SEQUENCE_AXIS_PREFIX = 'toSequence_'


def _mask_like(m, target):
    """Reshape a (batch,) mask to broadcast against ``target`` (batch, ...)."""
    n = _nd(target)
    return _reshape(m, (1,) * (n - 1), begin_axis=1, end_axis=1) if n > 1 else m


def _as_tensor_list(states):
    if isinstance(states, (list, tuple)):
        return [_to_tensor(s) for s in states]
    return [_to_tensor(states)]


def _map_constants(fn, constants):
    """``fn`` on each tensor of ``rnn``'s constants, nested lists kept as they are (Keras
    2.0's recurrent layers pass each dropout mask set as one list of masks)."""
    return [type(c)(_map_constants(fn, c)) if isinstance(c, (list, tuple)) else fn(c)
            for c in constants]


def _rnn_unrolled(step_function, inputs, states, constants, mask, go_backwards, steps):
    """The loop written out step by step (static time length)."""
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    outputs = []
    prev = None
    for t in order:
        x_t = _drop_axis(C.slice(inputs, 1, t, t + 1), 1)
        out, new_states = step_function(x_t, states + constants)
        out = _to_tensor(out)
        new_states = _as_tensor_list(new_states)
        if mask is not None:
            m = _drop_axis(C.slice(mask, 1, t, t + 1), 1)
            if prev is None:
                prev = C.zeros_like(out)
            out = C.element_select(_mask_like(m, out), out, prev)
            new_states = [C.element_select(_mask_like(m, ns), ns, s)
                          for ns, s in zip(new_states, states)]
        prev = out
        states = new_states
        outputs.append(_add_axis(out, 1))
    stacked = C.splice(*outputs, axis=1) if len(outputs) > 1 else outputs[0]
    return prev, stacked, states


def _batch_items(x):
    """A static ``(B, ...)`` tensor as ``B`` items on CNTK's dynamic batch axis, each of shape
    ``(1, ...)`` (``C.to_batch``): the unit axis keeps the Keras batch axis in place for the ops of
    a step function."""
    return _op(_SWIG.to_batch, _add_axis(x, 1))


def _unbatch_items(x, sizes):
    """Back from ``_batch_items``-style items (``C.unpack_batch``): the leading axes get the
    static ``sizes`` (batch first, None for free), which replace the items' leading axes up to
    their unit axis (one reshape)."""
    u = _op(_SWIG.unpack_batch, x)
    n = len(sizes)
    shp = _static_shape(u)
    end = n + 1 if len(shp) > n and shp[n] == 1 else n
    if list(sizes).count(None) > 1:   # CNTK's reshape takes one free dimension at most
        return _drop_axis(u, n) if end > n else u
    return _reshape(u, _shape_arg(sizes), begin_axis=0, end_axis=end)


def _batch_sizes(inputs, states, mask):
    """The sizes that axis 0 of a tensor carrying the batch of ``rnn``'s inputs may have: free
    (None: the batch of placeholders), the inputs' and the static sizes of the initial states'
    and the mask's axis 0 (``rnn`` on a free-batch input with a fully shaped initial state)."""
    sizes = set([None, _static_shape(inputs)[0]])
    for t in states + ([mask] if mask is not None else []):
        if _nd(t) >= 1 and _static_shape(t)[0] is not None:
            sizes.add(_static_shape(t)[0])
    return sizes


def _rnn_recurrence(step_function, inputs, states, constants, mask, go_backwards):
    """The loop as a CNTK recurrence (any time length, static or not).

    Inside the recurrence the Keras batch is CNTK's dynamic batch axis and time its sequence
    axis, so each step's tensors have a static shape ``(1, ...)`` whatever the batch fed
    (``_batch_items``, ``C.to_sequence``); the initial states (``C.to_batch``) start
    ``C.sequence.past_value`` recurrences, constants whose axis 0 is the batch are spread over
    the steps (``C.sequence.broadcast_as``; axis 0 free, or the static size of the inputs',
    initial states' or mask's axis 0), others stay as they are. ``step_function`` is
    called once; CNTK runs it for the fed length and back-propagates through time. A mask keeps
    the previous state and repeats the previous output (zeros before the first kept step).
    """
    if go_backwards:
        inputs = reverse(inputs, 1)
        mask = reverse(mask, 1) if mask is not None else None
    batch = _static_shape(inputs)[0]
    sizes = _batch_sizes(inputs, states, mask)
    xs = _op(_SWIG.to_sequence, _op(_SWIG.to_batch, _add_axis(inputs, 2)),
             _SEQUENCE_AXIS_PREFIX)

    def spread(c):
        if _nd(c) >= 1 and _static_shape(c)[0] in sizes:
            return _op(_SWIG.broadcast_as, _batch_items(c), xs)
        return c
    consts = _map_constants(spread, constants)
    inits = [_batch_items(s) for s in states]
    slots = [C.placeholder(shape=_var(i).shape, dynamic_axes=_var(xs).dynamic_axes)
             for i in inits]
    # the steps' layout, stated: CNTK would otherwise give a delayed value the layout of its
    # initial state (one step) when an op reads it before any other sequence tensor
    prevs = [_op(_SWIG.reconcile_dynamic_axes, _op(_SWIG.past_value, ph, i, 1), xs)
             for ph, i in zip(slots, inits)]
    out, new_states = step_function(xs, prevs + consts)
    out = _to_tensor(out)
    new_states = _as_tensor_list(new_states)
    if len(new_states) != len(states):
        raise ValueError('rnn: step_function returned %d states, expected %d'
                         % (len(new_states), len(states)))
    binding = {}
    if mask is not None:
        ms = C.to_sequence_like(C.to_batch(_add_axis(mask, 2)), xs)
        out_ph = C.placeholder(shape=_var(out).shape, dynamic_axes=_var(xs).dynamic_axes)
        # past_value starts from zeros: the output repeated before the first kept step
        out = C.element_select(_mask_like(ms, out), out, C.sequence.past_value(out_ph))
        new_states = [C.element_select(_mask_like(ms, ns), ns, pv)
                      for ns, pv in zip(new_states, prevs)]
        binding[out_ph] = _var(out)
    for ph, ns in zip(slots, new_states):
        binding[ph] = _var(ns)
    body = C.combine([_var(out)] + [_var(ns) for ns in new_states])
    read = set(ph.uid for ph in body.placeholders)   # a state the step never reads is unbound
    binding = dict((ph, v) for ph, v in binding.items() if ph.uid in read)
    if binding:
        body.replace_placeholders(binding)
    steps = _static_shape(inputs)[1]
    outputs = _unbatch_items(_op(_SWIG.unpack, out, 0., True), (batch, steps))
    last = _unbatch_items(_op(_SWIG.last, out), (batch,))
    return last, outputs, [_unbatch_items(_op(_SWIG.last, ns), (batch,)) for ns in new_states]


#: static time lengths up to this are written out even with ``unroll=False``: a Keras 2.3.1
#: LSTM / BiLSTM training step took 0.8-0.9x the recurrence's time unrolled at 1-2 steps (a GRU
#: the same time), and the same or more from 3-4 steps on (benchmarks/README.md)
_UNROLL_MAX_STEPS = 2


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """A CNTK recurrence (``unroll=False``, static or unknown time length): the batch moves to
    CNTK's batch axis and time to a sequence axis (``C.to_batch``, ``C.to_sequence``), each state
    is a ``C.sequence.past_value`` started from its initial state, masks select with
    ``C.element_select``, and the results come back with ``C.sequence.last`` /
    ``C.sequence.unpack`` and ``C.unpack_batch``; ``step_function`` is called once, on per-sample
    tensors of static shape ``(1, ...)``, and CNTK back-propagates through time. ``unroll=True``
    with a static length (or an int ``input_length`` for an unknown one), and a static length of
    1 or 2 steps (faster so), write the steps out."""
    inputs = _to_tensor(inputs)
    constants = _map_constants(_to_tensor, constants or [])
    states = [_to_tensor(s) for s in initial_states]
    if mask is not None:
        mask = _to_tensor(mask, dtype=dtype(inputs))
        if _nd(mask) == 3:
            mask = _drop_axis(mask, 2)
    steps = _static_shape(inputs)[1]
    if steps is None and unroll and isinstance(input_length, (int, np.integer)):
        steps = int(input_length)
        inputs = _reshape(inputs, (steps,), begin_axis=1, end_axis=2)
        if mask is not None and _static_shape(mask)[1] is None:
            mask = _reshape(mask, (steps,), begin_axis=1, end_axis=2)
    seen = []

    def step(x_t, step_states):
        out, new_states = step_function(x_t, step_states)
        parts = [out] + (list(new_states) if isinstance(new_states, (list, tuple))
                         else [new_states])
        if builtins.any(getattr(t, '_uses_learning_phase', False) for t in parts):
            seen.append(True)
        return out, new_states
    if steps is None or not (unroll or steps <= _UNROLL_MAX_STEPS):
        last, outputs, new_states = _rnn_recurrence(step, inputs, states, constants, mask,
                                                    go_backwards)
    else:
        last, outputs, new_states = _rnn_unrolled(step, inputs, states, constants, mask,
                                                  go_backwards, steps)
    if seen:
        _keras_meta(last, keras_shape=False, uses_learning_phase=True)
        _keras_meta(outputs, keras_shape=False, uses_learning_phase=True)
    return last, outputs, new_states


def switch(condition, then_expression, else_expression):
    """``C.element_select``; a ``condition`` of lower rank gets trailing unit axes."""
    if callable(then_expression) and not _is_engine_tensor(then_expression):
        then_expression = then_expression()
    if callable(else_expression) and not _is_engine_tensor(else_expression):
        else_expression = else_expression()
    t, e = _coerce_pair(then_expression, else_expression)
    cond = _to_tensor(condition, dtype=dtype(t))
    nc, nt = _nd(cond), builtins.max(_nd(t), _nd(e))
    if 0 < nc < nt:
        cond = _reshape(cond, (1,) * (nt - nc), begin_axis=nc, end_axis=nc)
    return _op(_SWIG.element_select, cond, t, e)


def in_train_phase(x, alt, training=None):
    """Chosen when the graph is built for ``training`` 0/1, else at run time with ``switch``
    (``C.element_select``)."""
    uses = training is None
    if training is None:
        training = learning_phase()
    if isinstance(training, (int, bool, np.integer)) and not _is_engine_tensor(training):
        chosen = x if training else alt
        return chosen() if callable(chosen) and not _is_engine_tensor(chosen) else chosen
    out = switch(training, x, alt)
    return _keras_meta(out, keras_shape=False, uses_learning_phase=True) if uses else out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)
