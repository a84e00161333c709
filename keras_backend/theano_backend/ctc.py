"""CTC on Theano 1.0.5 / PyTensor: the engine-level functions of the names of
:mod:`keras_backend.api.ctc`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
from __future__ import absolute_import, division, print_function

import numpy as np

from .. import checks, common, ctc_search, generic
from . import math as _math, shapes as _shapes, tensors as _tensors
from .core import T, th, _constant_like, _engine, _known_shape, _to_tensor
from .helpers import _log_softmax, _scan

_steps_needed = generic.ctc_steps_needed(generic.namespace(_tensors, _shapes, _math))


def ctc_label_dense_to_sparse(labels, label_lengths):
    """The engine's csr sparse matrix (int32)."""
    labels = T.cast(_to_tensor(labels, 'int32'), 'int32')
    lengths = T.cast(T.flatten(_to_tensor(label_lengths, 'int32')), 'int64')
    width = labels.shape[1]
    lengths = T.minimum(lengths, width)
    mask = T.lt(T.arange(width).dimshuffle('x', 0), lengths.dimshuffle(0, 'x'))
    rows, cols = T.nonzero(mask)
    data = labels[rows, cols]
    indptr = T.concatenate([T.zeros((1,), dtype='int64'), T.cumsum(lengths)])
    out = _engine.sparse.CSR(data, T.cast(cols, 'int32'), T.cast(indptr, 'int32'),
                             T.cast(labels.shape, 'int32'))
    out._keras_shape = tuple(_known_shape(labels))
    return out


_NEG = -1e30


def _lse2(a, b):
    m = T.maximum(a, b)
    return m + T.log(T.exp(a - m) + T.exp(b - m))


def _last_or(seq, init):
    """Last entry of a scan result, or ``init`` when the scan ran 0 steps."""
    padded = T.concatenate([init.dimshuffle(['x'] + list(range(init.ndim))), seq], axis=0)
    return padded[-1]


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Log-space forward recursion in engine ``scan``, behind the engine's ``Assert`` that
    each label sequence fits its input (the rule of ``generic.ctc_steps_needed``)."""
    y_pred = _to_tensor(y_pred)
    labels = T.cast(_to_tensor(y_true, 'int32'), 'int64')
    in_len = T.cast(T.flatten(_to_tensor(input_length, 'int32')), 'int64')
    lab_len = T.cast(T.flatten(_to_tensor(label_length, 'int32')), 'int64')
    dt = y_pred.dtype
    logp = _log_softmax(T.log(y_pred + _constant_like(y_pred, common.epsilon())), 2)
    n_classes = y_pred.shape[2]
    blank = n_classes - 1
    batch = y_pred.shape[0]
    max_lab = labels.shape[1]
    labels = T.clip(labels, 0, blank)
    ext_len = 2 * max_lab + 1
    ext = T.alloc(T.cast(blank, 'int64'), batch, ext_len)
    ext = T.set_subtensor(ext[:, 1::2], labels)
    # skip transitions s-2 -> s: allowed when ext[s] is not blank and differs from ext[s-2]
    prev2 = T.concatenate([T.alloc(T.cast(-1, 'int64'), batch, 2), ext[:, :-2]], axis=1)
    skip = T.and_(T.neq(ext, blank), T.neq(ext, prev2))
    neg = _constant_like(logp, _NEG)
    rows = T.arange(batch).dimshuffle(0, 'x')
    lp_seq = logp.dimshuffle(1, 0, 2)  # (T, B, C)
    s_idx = T.arange(ext_len).dimshuffle('x', 0)
    init = T.switch(T.lt(s_idx, 2), lp_seq[0][rows, ext], neg)
    init = T.switch(T.gt(in_len, 0).dimshuffle(0, 'x'), init,
                    T.switch(T.eq(s_idx, 0), T.zeros_like(init), neg))

    def _step(lp_t, t, alpha):
        e = lp_t[rows, ext]
        a1 = T.concatenate([T.alloc(neg, batch, 1), alpha[:, :-1]], axis=1)
        a2 = T.concatenate([T.alloc(neg, batch, 2), alpha[:, :-2]], axis=1)
        a2 = T.switch(skip, a2, neg)
        m = T.maximum(T.maximum(alpha, a1), a2)
        total = m + T.log(T.exp(alpha - m) + T.exp(a1 - m) + T.exp(a2 - m))
        new = T.maximum(total + e, neg)
        active = T.lt(t, in_len).dimshuffle(0, 'x')
        return T.switch(active, new, alpha)

    steps = T.arange(1, lp_seq.shape[0])
    alphas = _scan(_step, sequences=[lp_seq[1:], steps], outputs_info=[init])
    final = _last_or(alphas, init)
    b_idx = T.arange(batch)
    end = final[b_idx, 2 * lab_len]
    end_m1 = final[b_idx, T.maximum(2 * lab_len - 1, 0)]
    end_m1 = T.switch(T.gt(lab_len, 0), end_m1, neg)
    loglik = _lse2(end, end_m1)
    loss = T.cast(-loglik, dt).dimshuffle(0, 'x')
    # a sequence that does not fit its input: our ValueError at run time (the engine's Assert)
    fits = T.all(T.le(_steps_needed(y_true, label_length),
                      T.reshape(T.cast(_to_tensor(input_length, 'int32'), 'int32'), (-1, 1))))
    return _engine.assert_true(loss, fits, checks.runtime_check_message(
        'ctc_batch_cost', generic.CTC_TOO_SHORT))


class _CTCBeamSearchOp(_engine.Op):
    """Graph op: CTC prefix beam search over log-probabilities.

    Inputs: ``log_probs`` (batch, T, C) float (already log-softmax-normalised),
    ``lengths`` (batch,) int.  Outputs: ``top_paths`` int64 matrices
    (batch, max_len_i) padded with -1, then ``log_prob`` (batch, top_paths).
    Blank is class C - 1.  ``perform`` runs the search with numpy: this Op is
    the engine-level implementation (no engine offers one).
    """

    __props__ = ('beam_width', 'top_paths', 'merge_repeated')

    def __init__(self, beam_width, top_paths, merge_repeated):
        self.beam_width = int(beam_width)
        self.top_paths = int(top_paths)
        self.merge_repeated = bool(merge_repeated)
        super(_CTCBeamSearchOp, self).__init__()

    def make_node(self, log_probs, lengths):
        log_probs = T.as_tensor_variable(log_probs)
        lengths = T.as_tensor_variable(lengths)
        batch = (_engine.static_shape(log_probs) or (None,))[0]
        outs = [_engine.input_tensor('int64', (batch, None)) for _ in range(self.top_paths)]
        outs.append(_engine.input_tensor(log_probs.dtype, (batch, self.top_paths)))
        if not _engine.HAS_STATIC_SHAPES:  # sizes the engine's types cannot hold
            for o in outs[:-1]:
                o._keras_shape = (batch, None)
            outs[-1]._keras_shape = (batch, self.top_paths)
        return _engine.Apply(self, [log_probs, lengths], outs)

    def perform(self, node, inputs, output_storage, params=None):
        log_probs, lengths = inputs
        paths, scores = ctc_search.prefix_beam_search(
            log_probs, lengths, self.beam_width, self.top_paths, self.merge_repeated)
        for k in range(self.top_paths):
            output_storage[k][0] = ctc_search.pad_labellings(paths[k], np.int64)
        output_storage[self.top_paths][0] = scores.astype(log_probs.dtype)

    def grad(self, inputs, output_grads):
        from_grad = th.gradient.grad_undefined
        return [from_grad(self, 0, inputs[0]), from_grad(self, 1, inputs[1])]


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Greedy: engine tensor ops; beam search: a custom graph ``Op`` (no engine offers
    one) running ``ctc_search.prefix_beam_search``."""
    y_pred = _to_tensor(y_pred)
    lengths = T.cast(T.flatten(_to_tensor(input_length, 'int32')), 'int64')
    logits = T.log(y_pred + _constant_like(y_pred, common.epsilon()))
    if greedy:
        best = T.argmax(logits, axis=2)  # (B, T)
        best_val = T.max(logits, axis=2)
        n_t = y_pred.shape[1]
        t_idx = T.arange(n_t).dimshuffle('x', 0)
        valid = T.lt(t_idx, lengths.dimshuffle(0, 'x'))
        log_prob = -T.sum(T.switch(valid, best_val, T.zeros_like(best_val)), axis=1,
                          keepdims=True)
        blank = y_pred.shape[2] - 1
        prev = T.concatenate([T.alloc(T.cast(-1, 'int64'), best.shape[0], 1), best[:, :-1]],
                             axis=1)
        keep = T.and_(T.and_(T.neq(best, blank), T.neq(best, prev)), valid)
        keep_i = T.cast(keep, 'int64')
        pos = T.cumsum(keep_i, axis=1) - 1
        width = T.maximum(T.max(T.sum(keep_i, axis=1)), 0)
        col = T.switch(keep, pos, width)
        rows = T.arange(best.shape[0]).dimshuffle(0, 'x') + T.zeros_like(best)
        out = T.alloc(T.cast(-1, 'int64'), best.shape[0], width + 1)
        out = T.set_subtensor(out[rows.flatten(), col.flatten()],
                              T.switch(keep, best, -1).flatten())
        return [out[:, :width]], log_prob
    beam_width = int(beam_width)
    top_paths = int(top_paths)
    log_probs = _log_softmax(logits, 2)
    outs = _CTCBeamSearchOp(beam_width, top_paths, merge_repeated)(log_probs, lengths)
    return list(outs[:top_paths]), outs[top_paths]
