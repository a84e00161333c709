"""Control flow on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.control_flow`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import sys

from .. import generic
from .core import (T, _bany, _bmax, _clone, _engine, _is_engine_tensor, _known_shape,
                   _outer_parts, _stand_in, _to_tensor, _with_shape)
from .helpers import _scan
from .session import learning_phase
from .tensors import zeros_like
from .shapes import stack

#: this module: the functions of ``generic`` bound here read ``zeros_like``, ``switch`` and
#: ``stack`` from it
_K = sys.modules[__name__]


def _mask_like(m, target):
    """A (batch,) bool/number mask as a bool tensor broadcasting against ``target``
    (batch, ...)."""
    return T.neq(m, 0).dimshuffle([0] + ['x'] * (target.ndim - 1))


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """Engine ``scan`` (a Python loop when ``unroll``). What the step computes without its
    inputs (dropout masks drawn on a first call outside the loop, weight slices) is hoisted out
    of ``scan``, so gradients flow with random masks; results carry ``_uses_learning_phase``."""
    inputs = _to_tensor(inputs)
    constants = list(constants or [])
    initial_states = list(initial_states)
    if mask is not None:
        mask = _to_tensor(mask)
        if mask.ndim == 3:
            mask = mask[:, :, 0]
    if unroll:
        steps = _known_shape(inputs)[1]
        if steps is None:
            steps = input_length
        if steps is None:
            raise ValueError('rnn: unroll=True needs a static time length or input_length')
        # the mask as the engine's bool (nonzero = keep); ``switch`` lays it along the
        # leading axis of each step's output and state
        return generic.unrolled_rnn(_K, step_function, inputs, initial_states, go_backwards,
                                    None if mask is None else T.neq(mask, 0), constants, steps)

    axes = [1, 0] + list(range(2, inputs.ndim))
    seq = inputs.dimshuffle(axes)  # (time, batch, ...)
    if mask is not None:
        mask_seq = mask.dimshuffle(1, 0)
    n_states = len(initial_states)
    if go_backwards:
        seq = seq[::-1]
        if mask is not None:
            mask_seq = mask_seq[::-1]

    # Build the step once on stand-in inputs, then move every part of it that
    # does not depend on the step's inputs (dropout masks drawn before the
    # loop, weight slices, ...) out of the loop as explicit non-sequences: the
    # engine's scan would otherwise rebuild those graphs inside the loop,
    # random generators included, and cannot differentiate through them.
    # A first call on the real first step (as Keras' TensorFlow backend does)
    # lets a step that caches tensors on its first call (Keras' recurrent
    # cells draw their dropout masks so) build them outside the loop.
    out0, _ = step_function(seq[0], initial_states + constants)
    x_in = _stand_in(seq[0], tuple(_known_shape(seq))[1:])
    # the states' stand-ins unbroadcast, as _scan carries them (a stateful layer's state
    # variable of batch size 1 is broadcastable on that axis): an op the step builds on
    # a stand-in then takes the loop's own state variable
    s_in = [_stand_in(_engine.unbroadcast(s), _known_shape(s)) for s in initial_states]
    draws_before = _engine.rng_mark()
    out, new_states = step_function(x_in, s_in + constants)
    new_states = [T.cast(ns, s.dtype) for s, ns in zip(initial_states, list(new_states))]
    uses_lp = _bany(getattr(v, '_uses_learning_phase', False) for v in [out] + new_states)
    inner = [x_in] + s_in
    inner_ids = set(id(v) for v in inner)
    for rng, nxt in _engine.rng_updates_since(draws_before):
        # a draw made inside the step from its inputs: as with Keras' Theano
        # backend, its generator is not advanced (same draw at every step)
        if nxt is not None and _bany(id(a) in inner_ids for a in _engine.ancestors([nxt])):
            _engine.freeze_rng(rng)
    hoisted = _outer_parts([out] + new_states, inner)
    n_h = len(hoisted)

    def _rebuild(x_t, states, hoisted_in):
        replace = dict(zip(inner, [x_t] + list(states)))
        replace.update(zip(hoisted, hoisted_in))
        return _clone([out] + new_states, replace)

    # Keras' cells return their output as one of their new states (LSTM, GRU
    # and SimpleRNN: h): without a mask, scan then carries it once and the
    # output sequence is that state's sequence
    alias = [i for i, ns in enumerate(new_states) if ns is out]
    if mask is None and alias:
        def _step(x_t, *args):
            return _rebuild(x_t, args[:n_states], args[n_states:n_states + n_h])[1:]

        results = _scan(_step, sequences=[seq], outputs_info=initial_states,
                        non_sequences=hoisted)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        results = [results[alias[0]]] + results
    elif mask is None:
        def _step(x_t, *args):
            states = args[:n_states]
            return _rebuild(x_t, states, args[n_states:n_states + n_h])

        results = _scan(_step, sequences=[seq], outputs_info=[None] + initial_states,
                        non_sequences=hoisted)
    else:
        init_out = T.zeros_like(out0)

        def _step(x_t, m_t, prev_out, *args):
            states = list(args[:n_states])
            res = _rebuild(x_t, states, args[n_states:n_states + n_h])
            out_t = T.switch(_mask_like(m_t, res[0]), res[0], prev_out)
            kept = [T.cast(T.switch(_mask_like(m_t, st), ns, st), st.dtype)
                    for st, ns in zip(states, res[1:])]
            return [out_t] + kept

        results = _scan(_step, sequences=[seq, mask_seq],
                        outputs_info=[init_out] + initial_states, non_sequences=hoisted)
    if not isinstance(results, (list, tuple)):
        results = [results]
    outputs = results[0]
    states = [_with_shape(_last_entry(s), _known_shape(s0))
              for s, s0 in zip(results[1:], initial_states)]
    last = _last_entry(outputs)
    outputs = outputs.dimshuffle([1, 0] + list(range(2, outputs.ndim)))
    out_s = list(_known_shape(outputs))
    out_s[1] = _known_shape(inputs)[1]
    if out_s[0] is None:
        out_s[0] = _known_shape(inputs)[0]
    # sizes the scan's shape inference loses are those of one step's output
    step_s = _known_shape(out)
    if step_s is not None and len(step_s) == len(out_s) - 1:
        out_s[2:] = [s if s is not None else t for s, t in zip(out_s[2:], step_s[1:])]
    outputs = _with_shape(outputs, out_s)
    last = _with_shape(last, [out_s[0]] + out_s[2:])
    for v in [last, outputs] + states:
        v._uses_learning_phase = uses_lp
    return last, outputs, states


def _last_entry(sequence):
    """The last step of a ``scan`` output: the last entry of its whole buffer where the output
    is recurrent (``_buffer_of``), else ``sequence[-1]``."""
    buffer = _buffer_of(sequence)
    return sequence[-1] if buffer is None else buffer[-1]


def _buffer_of(sequence):
    """The whole buffer of a recurrent ``scan`` output (the initial state, then one entry per
    step) where ``sequence`` is its steps (``buffer[1:]``, as the engine returns it), else
    None: its last entry is the last step's, read without the slice of the slice (Theano's
    and PyTensor's ``scan`` memory rewrite then sizes the buffer with the index arithmetic
    of a plain ``[-1]``)."""
    owner = sequence.owner
    if owner is None or type(owner.op).__name__ != 'Subtensor' or len(owner.inputs) != 2:
        return None
    index = getattr(owner.op, 'idx_list', ())
    if len(index) != 1 or not isinstance(index[0], slice) or index[0].stop is not None or \
            index[0].step is not None:
        return None
    try:
        start = int(T.get_scalar_constant_value(owner.inputs[1]))
    except Exception:       # not a constant
        return None
    return owner.inputs[0] if start == 1 else None


def _call_if(x):
    """``x()`` for a callable (Keras passes branches as functions), else ``x``."""
    return x() if callable(x) else x


def switch(condition, then_expression, else_expression):
    """``T.switch``; a lower-rank condition gets trailing broadcast axes."""
    cond = _to_tensor(condition)
    then_expression = _to_tensor(_call_if(then_expression))
    else_expression = _to_tensor(_call_if(else_expression))
    expr_ndim = _bmax(then_expression.ndim, else_expression.ndim)
    if 0 < cond.ndim < expr_ndim:
        cond = cond.dimshuffle(list(range(cond.ndim)) + ['x'] * (expr_ndim - cond.ndim))
    return T.switch(cond, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """``T.switch`` on the learning phase; the result carries ``_uses_learning_phase``."""
    if training is None:
        training = learning_phase()
        uses_lp = True
    else:
        uses_lp = False
    if not _is_engine_tensor(training):
        return _call_if(x) if training in (1, True) else _call_if(alt)
    x = _to_tensor(_call_if(x))
    alt = _to_tensor(_call_if(alt))
    out = T.switch(T.neq(training, 0), x, alt)
    if uses_lp:
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)
