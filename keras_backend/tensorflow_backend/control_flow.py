"""Control flow on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.control_flow`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import common
from .core import (graph_always, graph_aware, tf, _EagerTensor, _graph, _in_our_graph,
                   _is_symbolic, _LOOP_READS, _set_shape, _State, _to_tensor)
from .helpers import py_all, py_any, _shape_arg
from .session import learning_phase


def _mask_like(m, t):
    """Reshape a ``(batch,)`` bool mask to broadcast against ``t``."""
    extra = t.shape.rank - 1
    if extra <= 0:
        return m
    return tf.reshape(m, tf.concat([tf.shape(m), tf.ones([extra], 'int32')], 0))


def _depends_on_learning_phase(tensors):
    """True when the symbolic learning phase is an ancestor of one of ``tensors``
    (searched through loop and function inputs of the module graph)."""
    lp = _State.learning_phase_tensor
    if lp is None:
        return False
    target = lp.op
    seen = set()
    stack = [t.op for t in tensors if isinstance(t, tf.Tensor) and not
             isinstance(t, _EagerTensor)]
    while stack:
        op = stack.pop()
        if op is target:
            return True
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.extend(i.op for i in op.inputs)
        stack.extend(op.control_inputs)
    return False


def _rnn_phase_flags(last_output, outputs, new_states, step_uses_phase):
    """Mark rnn's results with ``_uses_learning_phase`` when the step used the
    learning phase (its outputs carried the flag, or the phase feeds them)."""
    if step_uses_phase or _depends_on_learning_phase([last_output]):
        for t in (last_output, outputs):
            try:
                t._uses_learning_phase = True
            except AttributeError:
                pass
    return last_output, outputs, new_states


#: the gradient that ``rnn``'s loop bodies give their slices (``_slice_gradient``)
_SLICE_GRADIENT = 'KerasBackendSliceByPad'


def _slice_gradient(op, grad):
    """The gradient of a ``StridedSlice`` made in an ``rnn`` loop body: for a plain slice
    (strides 1, no new or dropped axes, constant bounds inside known sizes: Keras' cells'
    ``z[:, :units]``) the incoming gradient padded with zeros (``tf.pad``), a quarter of
    the time TensorFlow's ``StridedSliceGrad`` took in an LSTM(256)'s profile
    (benchmarks/README.md); anything else by ``StridedSliceGrad`` as TensorFlow does. The same
    values."""
    x, begin, end, strides = op.inputs
    b, e, st = [tf.get_static_value(t) for t in (begin, end, strides)]
    attrs = dict((k, op.get_attr(k)) for k in ('begin_mask', 'end_mask', 'ellipsis_mask',
                                                 'new_axis_mask', 'shrink_axis_mask'))
    shape = x.shape.as_list() if x.shape.rank is not None else None
    pads = None
    if (b is not None and e is not None and st is not None and shape is not None and
            not (attrs['ellipsis_mask'] or attrs['new_axis_mask'] or
                 attrs['shrink_axis_mask']) and all(int(v) == 1 for v in st)):
        pads = []
        for i, size in enumerate(shape):
            lo = 0 if i >= len(b) or attrs['begin_mask'] >> i & 1 else int(b[i])
            hi = None if i >= len(e) or attrs['end_mask'] >> i & 1 else int(e[i])
            if size is None:
                if lo != 0 or hi is not None:   # bounds within an unknown size
                    pads = None
                    break
                pads.append([0, 0])
                continue
            start, stop, _ = slice(lo, hi).indices(size)   # Python's slice rules
            pads.append([start, size - max(stop, start)])
    if pads is not None:
        dx = tf.pad(grad, pads)
    else:
        dx = tf.raw_ops.StridedSliceGrad(
            shape=tf.shape(x, out_type=begin.dtype), begin=begin, end=end, strides=strides,
            dy=grad, **attrs)
    return dx, None, None, None


try:
    tf.RegisterGradient(_SLICE_GRADIENT)(_slice_gradient)
except KeyError:   # registered by an earlier import of this module (a test's fresh import)
    pass


@graph_always
def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None):
    """``tf.while_loop`` over ``tf.TensorArray`` objects (a Python loop when
    ``unroll``); the step is called once more outside the loop to learn its output's dtype
    and shape. Variables the step reads through ``K`` ops are read once before the loop
    (``_loop_read``). ``input_length`` is not used."""
    inputs = _to_tensor(inputs)
    n = inputs.shape.rank
    if n is None:   # the shared rules pass an unknown rank; the loop's transpose needs it
        raise ValueError('rnn: inputs must have rank >= 3 (batch, time, ...), got rank %s' % n)
    states = [_to_tensor(s) for s in (initial_states or [])]
    constants = list(constants or [])
    if mask is not None:
        mask = _to_tensor(mask)
        if mask.shape.rank == 3 and mask.shape[2] == 1:
            mask = tf.squeeze(mask, 2)
        if mask.shape.rank != 2:
            raise ValueError('mask: expected a (batch, time) tensor, got shape %s'
                             % (mask.shape,))
        if mask.dtype != tf.bool:
            mask = tf.not_equal(mask, tf.zeros((), mask.dtype))
    perm = [1, 0] + list(range(2, n))
    inputs_tm = tf.transpose(inputs, perm)
    mask_tm = tf.transpose(mask) if mask is not None else None
    if go_backwards:
        inputs_tm = tf.reverse(inputs_tm, [0])
        if mask_tm is not None:
            mask_tm = tf.reverse(mask_tm, [0])

    uses_phase = []

    def _note_phase(out, new_states):
        if py_any(getattr(t, '_uses_learning_phase', False) for t in [out] + list(new_states)):
            uses_phase.append(True)

    def _step(x_t, m_t, prev_output, states):
        with tf.compat.v1.get_default_graph().gradient_override_map(
                {'StridedSlice': _SLICE_GRADIENT}):
            out, new_states = step_function(x_t, list(states) + constants)
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) \
            else [new_states]
        _note_phase(out, new_states)
        out = _to_tensor(out)
        new_states = [_to_tensor(s) for s in new_states]
        if len(new_states) != len(states):
            raise ValueError('rnn: step_function returned %d states, expected %d'
                             % (len(new_states), len(states)))
        if m_t is not None:
            if prev_output is None:
                prev_output = tf.zeros_like(out)
            out = tf.where(_mask_like(m_t, out), out, prev_output)
            new_states = [tf.where(_mask_like(m_t, ns), ns, s)
                          for ns, s in zip(new_states, states)]
        return out, new_states

    if unroll:
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError('rnn: unroll=True needs a known time length; inputs have shape %s'
                             % (inputs.shape,))
        xs = tf.unstack(inputs_tm, num=steps)
        ms = tf.unstack(mask_tm, num=steps) if mask_tm is not None else [None] * steps
        outputs, prev = [], None
        for t in range(steps):
            prev, states = _step(xs[t], ms[t], prev, states)
            outputs.append(prev)
        if not outputs:
            raise ValueError('rnn: inputs have 0 time steps')
        stacked = tf.stack(outputs, axis=1)
        return _rnn_phase_flags(outputs[-1], stacked, list(states), bool(uses_phase))

    time_steps = tf.shape(inputs_tm)[0]
    input_ta = tf.TensorArray(inputs_tm.dtype, size=time_steps,
                              element_shape=inputs_tm.shape[1:]).unstack(inputs_tm)
    # Trace one step outside the loop to learn the output's dtype and shape.
    out0, _ = _step(inputs_tm[0], None, None, states)
    output_ta = tf.TensorArray(out0.dtype, size=time_steps, element_shape=out0.shape)
    mask_ta = None
    if mask_tm is not None:
        mask_ta = tf.TensorArray(tf.bool, size=time_steps).unstack(mask_tm)

    def cond(t, *_):
        return t < time_steps

    carry_output = mask_ta is not None   # a mask repeats the previous output

    def body(t, out_ta, *loop_vars):
        x_t = input_ta.read(t)
        if carry_output:
            m_t, prev_output, loop_states = mask_ta.read(t), loop_vars[0], loop_vars[1:]
        else:
            m_t, prev_output, loop_states = None, None, loop_vars
        out, new_states = _step(x_t, m_t, prev_output, list(loop_states))
        new_states = [tf.cast(ns, s.dtype) for ns, s in zip(new_states, loop_states)]
        for ns, s in zip(new_states, loop_states):
            ns.set_shape(s.shape)
        out_ta = out_ta.write(t, out)
        return (t + 1, out_ta) + ((out,) if carry_output else ()) + tuple(new_states)

    # The initial "previous output" must not depend on the traced step's
    # values (that would run the step once more on every call).
    out_static = out0.shape.as_list()
    if py_all(d is not None for d in out_static):
        zeros0 = tf.zeros(out_static, out0.dtype)
    elif out_static and py_all(d is not None for d in out_static[1:]):
        zeros0 = tf.zeros(_shape_arg([tf.shape(inputs_tm)[1]] + out_static[1:]), out0.dtype)
        zeros0.set_shape(out_static)
    else:
        zeros0 = tf.zeros_like(out0)
    # No maximum_iterations: ``cond`` bounds the loop already (a second counter and a
    # LogicalAnd per step otherwise); the loop reads its step's variables once, before it.
    _LOOP_READS.append([tf.compat.v1.get_default_graph(), {}])
    try:
        loop = tf.while_loop(cond, body,
                             (tf.constant(0, 'int32'), output_ta)
                             + ((zeros0,) if carry_output else ()) + tuple(states))
    finally:
        _LOOP_READS.pop()
    outputs_tm = loop[1].stack()
    new_states = list(loop[3:] if carry_output else loop[2:])
    steps = inputs.shape[1]
    # the last output is read from the outputs' list (one element: ``stack`` would copy them
    # all on every call, even where only the last output is used)
    if carry_output:
        last_output = loop[2]
    elif steps is not None and steps > 0:
        last_output = loop[1].read(steps - 1)
    else:   # an unknown (or empty) time axis: zeros for 0 steps, as with a mask
        last_output = tf.cond(time_steps > 0, lambda: loop[1].read(time_steps - 1),
                              lambda: zeros0)
    last_output.set_shape(out0.shape)
    outputs = tf.transpose(outputs_tm, [1, 0] + list(range(2, outputs_tm.shape.rank)))
    if outputs.shape.rank is not None:
        outputs = _set_shape(outputs, [out0.shape[0], inputs.shape[1]] + out0.shape.as_list()[1:])
    return _rnn_phase_flags(last_output, outputs, new_states, bool(uses_phase))


def _call_if(x):
    return x() if callable(x) else x


@graph_aware
def switch(condition, then_expression, else_expression):
    """``tf.cond`` for a scalar condition (only the chosen branch runs), ``tf.where`` for
    an elementwise one."""
    if isinstance(condition, (bool, int, np.bool_, np.integer)):
        return _to_tensor(_call_if(then_expression if condition else else_expression))
    condition = _to_tensor(condition)
    if condition.dtype != tf.bool:
        condition = tf.cast(condition, tf.bool)
    cond_ndim = condition.shape.rank
    if cond_ndim == 0:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        if tf.executing_eagerly():
            return _to_tensor(then_fn() if bool(condition) else else_fn())
        return tf.cond(condition, lambda: _to_tensor(then_fn()), lambda: _to_tensor(else_fn()))
    then_t = _to_tensor(_call_if(then_expression))
    else_t = _to_tensor(_call_if(else_expression), then_t.dtype)
    expr_ndim = then_t.shape.rank
    if cond_ndim > expr_ndim:
        raise ValueError('switch: the rank of condition (%d) must be <= the rank of the '
                         'expressions (%d)' % (cond_ndim, expr_ndim))
    if cond_ndim < expr_ndim:
        condition = tf.reshape(condition, tf.concat(
            [tf.shape(condition), tf.ones([expr_ndim - cond_ndim], 'int32')], 0))
    return tf.where(condition, then_t, else_t)


def _phase_for(*exprs):
    """The learning phase to use when ``training`` is None."""
    fixed = common._fixed_learning_phase()
    if fixed is not None:
        return fixed
    if _in_our_graph() or py_any(_is_symbolic(e) for e in exprs):
        return learning_phase()
    # Eager values (or a graph that is not ours): the test phase.
    return 0


def _phase_switch(training, x, alt):
    """``switch`` for ``in_train_phase``. Decided by Keras' learning phase in the module
    graph itself (a layer's call, not a loop body), both expressions are built there and
    joined by a ``Select``: no cond, whose branch functions and their gradient functions
    cost far more to build and to compile (a cond per BatchNormalization and Dropout
    layer, 121 of them in DenseNet121). A compiled function never computes both:
    ``_Function`` specialises each for the phase's value (``core._fix_phase`` makes the
    select an ``Identity`` of the input taken and drops the other's ops), as a cond runs
    only its branch. Other conditions, and expressions of different shapes or dtypes,
    keep ``tf.cond``."""
    if training is not _State.learning_phase_tensor or \
            tf.compat.v1.get_default_graph() is not _graph():
        return switch(training, x, alt)
    then_t = _to_tensor(_call_if(x))
    else_t = _to_tensor(_call_if(alt))
    if (isinstance(then_t, tf.Tensor) and isinstance(else_t, tf.Tensor)
            and then_t.dtype == else_t.dtype and then_t.shape.rank is not None
            and then_t.shape.is_compatible_with(else_t.shape)):
        out = tf.raw_ops.Select(condition=training, x=then_t, y=else_t)
        out.set_shape(then_t.shape.merge_with(else_t.shape))
        return out
    return switch(training, lambda: then_t, lambda: else_t)


@graph_aware
def in_train_phase(x, alt, training=None):
    """With ``training`` None, eager ``x`` / ``alt`` and no phase set, the test
    branch is chosen."""
    if training is None:
        training = _phase_for(x, alt)
    if isinstance(training, (bool, int, np.bool_, np.integer)):
        return _call_if(x) if training else _call_if(alt)
    if tf.executing_eagerly() and _is_symbolic(training):
        with _graph().as_default():
            out = _phase_switch(training, x, alt)
    else:
        out = _phase_switch(training, x, alt)
    if training is _State.learning_phase_tensor and training is not None:
        # Keras' engine reads this flag to feed the learning phase in fit.
        out._uses_learning_phase = True
    return out


@graph_aware
def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)
