"""CTC on TensorFlow: the engine-level functions of the names of
:mod:`keras_backend.api.ctc`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from .. import checks, generic
from ..common import epsilon
from . import math as _math, shapes as _shapes, tensors as _tensors
from .core import graph_aware, tf, _constant_like, _set_shape, _to_tensor

_steps_needed = generic.ctc_steps_needed(generic.namespace(_tensors, _shapes, _math))


@graph_aware
def ctc_label_dense_to_sparse(labels, label_lengths):
    """A ``tf.SparseTensor`` built with ``tf.sequence_mask`` and
    ``tf.gather_nd``."""
    labels = _to_tensor(labels)
    lengths = tf.reshape(tf.cast(_to_tensor(label_lengths), 'int32'), [-1])
    lab_shape = tf.shape(labels)
    mask = tf.sequence_mask(lengths, maxlen=lab_shape[1])
    indices = tf.where(mask)
    values = tf.gather_nd(labels, indices)
    return tf.SparseTensor(indices, values, tf.cast(lab_shape, 'int64'))


@graph_aware
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """``tf.compat.v1.nn.ctc_loss`` (time-major) of ``log(y_pred + epsilon)``;
    the blank is the last class; behind a ``tf.debugging.Assert`` that each label
    sequence fits its input (the rule of ``generic.ctc_steps_needed``)."""
    y_pred = _to_tensor(y_pred)
    label_length = tf.reshape(tf.cast(_to_tensor(label_length), 'int32'), [-1])
    input_length = tf.reshape(tf.cast(_to_tensor(input_length), 'int32'), [-1])
    try:
        # a sequence that does not fit its input: our ValueError, at run time (eagerly: now)
        fits = tf.reduce_all(_steps_needed(y_true, label_length)
                             <= tf.reshape(input_length, [-1, 1]))
        check = tf.debugging.Assert(fits, [checks.runtime_check_message(
            'ctc_batch_cost', generic.CTC_TOO_SHORT)])
        with tf.control_dependencies([check]):
            sparse_labels = ctc_label_dense_to_sparse(y_true, label_length)
            sparse_labels = tf.SparseTensor(sparse_labels.indices,
                                            tf.cast(sparse_labels.values, 'int32'),
                                            sparse_labels.dense_shape)
            logits = tf.math.log(tf.transpose(y_pred, [1, 0, 2])
                                 + _constant_like(y_pred, epsilon()))
            loss = tf.compat.v1.nn.ctc_loss(labels=sparse_labels, inputs=logits,
                                            sequence_length=input_length, time_major=True)
    except tf.errors.InvalidArgumentError as e:      # eager values
        raise checks.engine_error('ctc_batch_cost', e) from e
    return tf.expand_dims(loss, 1)


@graph_aware
def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """``tf.nn.ctc_greedy_decoder`` (repeats always merged) or
    ``tf.compat.v1.nn.ctc_beam_search_decoder``; the blank is the last class; decoded labels
    are int64 padded with -1."""
    y_pred = _to_tensor(y_pred)
    logits = tf.math.log(tf.transpose(y_pred, [1, 0, 2]) + _constant_like(y_pred, epsilon()))
    if logits.dtype != tf.float32 and logits.dtype != tf.float64:
        logits = tf.cast(logits, 'float32')
    input_length = tf.reshape(tf.cast(_to_tensor(input_length), 'int32'), [-1])
    if greedy:
        decoded, log_prob = tf.nn.ctc_greedy_decoder(inputs=logits, sequence_length=input_length,
                                                     merge_repeated=True)
    else:
        if int(top_paths) > int(beam_width):
            raise ValueError('top_paths: must be <= beam_width, got %r > %r'
                             % (top_paths, beam_width))
        decoded, log_prob = tf.compat.v1.nn.ctc_beam_search_decoder(
            inputs=logits, sequence_length=input_length, beam_width=int(beam_width),
            top_paths=int(top_paths), merge_repeated=bool(merge_repeated))
    # The batch size of the decoded labels is y_pred's (known statically when
    # y_pred's is); their length depends on the data.
    dense = [_set_shape(tf.sparse.to_dense(st, default_value=-1), [y_pred.shape[0], None])
             for st in decoded]
    return dense, log_prob
