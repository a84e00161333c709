"""CTC: connectionist temporal classification.

The contract of each name of this section of the API reference, side by side: its
argument rules (``SPECS[name]``: ``({argument: checker}, [checks across arguments])``,
in the vocabulary of :mod:`keras_backend.checks`) and its one docstring
(``DOCS[name]``). :mod:`keras_backend.api` gathers the sections in order.
"""
from ..checks import (BOOL, T, ctc_decode_args, ctc_shapes, float_x_on_tensorflow, integer,
                      integer_tensor, label_lengths_per_row, rank)

TITLE = 'CTC'
NAMES = ('ctc_label_dense_to_sparse', 'ctc_batch_cost', 'ctc_decode')
SPECS = {}
DOCS = {}


# ---------------------------------------------------------------------------
# ctc_label_dense_to_sparse
# ---------------------------------------------------------------------------

SPECS['ctc_label_dense_to_sparse'] = ({'labels': rank(2), 'label_lengths': T},
                                      [integer_tensor('label_lengths'), label_lengths_per_row])

DOCS['ctc_label_dense_to_sparse'] = """Convert dense CTC label sequences to a sparse tensor.

Entry ``(i, j)`` of ``labels`` is kept when ``j < label_lengths[i]``; the
rest of each row is padding and is dropped. The kind of sparse object
returned is the engine's own (a ``tf.SparseTensor`` on TensorFlow, a sparse
matrix on Theano, a labels-with-lengths object on CNTK); ``is_sparse`` is
true for it and ``to_dense`` turns it back into a tensor with zeros past
each length.

Arguments:
    labels: An integer tensor of shape ``(batch, max_label_length)``.
    label_lengths: An integer tensor of shape ``(batch,)`` (or
        ``(batch, 1)``), the length of each label sequence.

Returns:
    A sparse tensor of dense shape ``(batch, max_label_length)`` holding
    the labels. CNTK has no integer tensors: its values are floats.

Raises:
    TypeError: If ``labels`` or ``label_lengths`` is not a tensor.
    ValueError: If ``labels`` is not 2-D.

Example:
    >>> labels = K.constant([[1, 2], [3, 4]], dtype='int32')
    >>> sp = K.ctc_label_dense_to_sparse(labels, K.constant([2, 1], dtype='int32'))
    >>> K.is_sparse(sp)
    True
    >>> K.eval(K.to_dense(sp)).tolist()
    [[1, 2], [3, 0]]
"""


# ---------------------------------------------------------------------------
# ctc_batch_cost
# ---------------------------------------------------------------------------

SPECS['ctc_batch_cost'] = ({'y_true': rank(2), 'y_pred': T, 'input_length': T, 'label_length': T},
                           [ctc_shapes])

DOCS['ctc_batch_cost'] = """Connectionist temporal classification (CTC) loss of each batch element.

The loss is minus the log probability of the label sequence, summed over
all alignments of it with the first ``input_length`` steps of ``y_pred``
(an alignment may repeat labels and insert blanks). The last class of
``y_pred`` is the blank. As in Keras 2.3.1 the predictions are used as
``log(y_pred + epsilon())``, normalised again by a log-softmax.

Arguments:
    y_true: An integer tensor of shape ``(batch, max_label_length)``, the
        label sequences (class ids below ``num_classes - 1``).
    y_pred: A float tensor of shape ``(batch, time, num_classes)``, softmax
        probabilities per step.
    input_length: An integer tensor of shape ``(batch, 1)``, the number of
        valid steps of each ``y_pred`` sequence.
    label_length: An integer tensor of shape ``(batch, 1)``, the number of
        valid labels of each ``y_true`` sequence.

Returns:
    A float tensor of shape ``(batch, 1)``: the CTC loss of each element.

Raises:
    TypeError: If an argument is not a tensor or numeric value.
    ValueError: If ``y_true`` is not 2-D or ``y_pred`` is not 3-D; if the
        static shape of ``input_length`` or ``label_length`` is not
        ``(batch, 1)``; when it runs, if a label sequence needs more steps
        than its input has, or the lengths fed are not one per sample (the
        engine's refusal, as a ValueError).

Example:
    >>> y_pred = K.constant(np.full((2, 2, 3), 1. / 3))    # 2 steps, 2 classes + blank
    >>> y_true = K.constant([[0, 1], [0, 0]], dtype='int32')
    >>> loss = K.ctc_batch_cost(y_true, y_pred, K.constant([[2], [2]], dtype='int32'),
    ...                         K.constant([[2], [1]], dtype='int32'))
    >>> np.round(K.eval(loss), 4)                          # -log(1/9), -log(3/9)
    array([[2.1972],
           [1.0986]], dtype=float32)
"""


# ---------------------------------------------------------------------------
# ctc_decode
# ---------------------------------------------------------------------------

SPECS['ctc_decode'] = ({'y_pred': T, 'input_length': T, 'greedy': BOOL,
                        'beam_width': integer(1), 'top_paths': integer(1),
                        'merge_repeated': BOOL}, [ctc_decode_args, float_x_on_tensorflow])

DOCS['ctc_decode'] = """Decode CTC predictions into label sequences.

As in Keras 2.3.1 the predictions are used as ``log(y_pred + epsilon())``.
Greedy decoding takes the most likely class at each valid step, merges
repeated classes and then drops the blanks (the last class). Beam search is
a CTC prefix beam search over the log-softmax of those logits: it keeps the
``beam_width`` best prefixes and returns the ``top_paths`` most likely label
sequences; with a narrow beam, which sequences and scores survive may differ
between engines.

Arguments:
    y_pred: A float tensor of shape ``(batch, time, num_classes)``, softmax
        probabilities per step; the last class is the blank.
    input_length: An integer tensor of shape ``(batch,)`` (or
        ``(batch, 1)``), the number of valid steps of each sequence.
    greedy: ``True`` (default) for greedy decoding, ``False`` for beam
        search.
    beam_width: An integer, the beam size of beam search (default 100).
    top_paths: An integer in ``[1, beam_width]``, the number of sequences
        beam search returns (default 1).
    merge_repeated: Beam search only: whether to merge repeated classes of
        the results (default ``False``).

Returns:
    A tuple ``(decoded, log_prob)``. ``decoded`` is a list of
    ``top_paths`` (1 for greedy) ``int64`` tensors of shape
    ``(batch, max_decoded_length)``, padded with -1 (floats on CNTK).
    ``log_prob`` is a float tensor: for greedy decoding, of shape
    ``(batch, 1)``, minus the sum over the valid steps of the largest logit
    ``log(p + epsilon())`` (TensorFlow's convention); for beam search, of
    shape ``(batch, top_paths)``, the log probability of each sequence.

Raises:
    TypeError: If ``y_pred`` or ``input_length`` is not a tensor, ``greedy`` or
        ``merge_repeated`` is not a bool, or ``beam_width`` or ``top_paths`` is not
        an int.
    ValueError: If ``y_pred`` is not 3-D, ``beam_width`` or ``top_paths`` is below
        1, or (beam search) ``top_paths`` is above ``beam_width``.

Example:
    >>> y_pred = K.constant([[[0.5, 0.25, 0.25],      # best: class 0
    ...                       [0.5, 0.25, 0.25],      # 0 again (merged)
    ...                       [0.25, 0.25, 0.5],      # blank
    ...                       [0.25, 0.5, 0.25]]])    # class 1
    >>> decoded, log_prob = K.ctc_decode(y_pred, K.constant([4], dtype='int32'))
    >>> K.eval(decoded[0]).tolist()
    [[0, 1]]
    >>> np.round(K.eval(log_prob), 4)                 # -4 * log(0.5)
    array([[2.7726]], dtype=float32)
    >>> decoded, _ = K.ctc_decode(y_pred, K.constant([3], dtype='int32'))
    >>> K.eval(decoded[0]).tolist()
    [[0]]
"""
