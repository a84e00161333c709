"""CTC on CNTK 2.7: the engine-level functions of the names of
:mod:`keras_backend.api.ctc`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import checks, ctc_search, generic
from ..common import epsilon
from .core import (C, dtype, _constant_like, _drop_axis, _log_softmax, _nd, _numpy_op,
                   _SparseLabels, _static_shape, _to_tensor, _var)


# Blank is the last class; the loss and the decoders are numpy graph nodes.

def ctc_label_dense_to_sparse(labels, label_lengths):
    """CNTK has no integer sparse tensor: the result pairs the dense labels with their lengths
    (``is_sparse`` is True; ``to_dense`` zeroes the entries past each length)."""
    labels = _to_tensor(labels)
    lengths = _to_tensor(label_lengths, dtype=dtype(labels))
    if _nd(lengths) == 2:
        lengths = _drop_axis(lengths, 1)
    return _SparseLabels(labels, lengths)


def _ctc_alpha_beta(lp, labels):
    """log alpha/beta over the extended label sequence; lp (T, C) log-probs."""
    T, nc = lp.shape
    blank = nc - 1
    ext = [blank]
    for l in labels:
        ext += [int(l), blank]
    S = len(ext)
    ninf = -np.inf
    a = np.full((T, S), ninf)
    b = np.full((T, S), ninf)
    a[0, 0] = lp[0, blank]
    if S > 1:
        a[0, 1] = lp[0, ext[1]]
    for t in range(1, T):
        for s in range(S):
            v = [a[t - 1, s]]
            if s > 0:
                v.append(a[t - 1, s - 1])
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                v.append(a[t - 1, s - 2])
            a[t, s] = np.logaddexp.reduce(v) + lp[t, ext[s]]
    b[T - 1, S - 1] = lp[T - 1, ext[S - 1]]
    if S > 1:
        b[T - 1, S - 2] = lp[T - 1, ext[S - 2]]
    for t in range(T - 2, -1, -1):
        for s in range(S):
            v = [b[t + 1, s]]
            if s < S - 1:
                v.append(b[t + 1, s + 1])
            if s < S - 2 and ext[s] != blank and ext[s] != ext[s + 2]:
                v.append(b[t + 1, s + 2])
            b[t, s] = np.logaddexp.reduce(v) + lp[t, ext[s]]
    logp = np.logaddexp(a[T - 1, S - 1], a[T - 1, S - 2] if S > 1 else ninf)
    return a, b, ext, logp


def _ctc_items(lp, y_true, in_len, lab_len):
    n = lp.shape[0]
    for name, value in (('input_length', in_len), ('label_length', lab_len)):
        if np.size(value) != n:        # the values fed: one length per sample
            raise ValueError(checks.runtime_check_message(
                'ctc_batch_cost', "argument '%s' must have one entry per sample (shape "
                "(%d, 1)); got %d entries" % (name, n, np.size(value))))
    in_len, lab_len = np.asarray(in_len).reshape(n), np.asarray(lab_len).reshape(n)
    for i in range(n):
        yield i, int(in_len[i]), [int(v) for v in y_true[i, :int(lab_len[i])]]


def _ctc_loss_np(lp, y_true, in_len, lab_len):
    out = np.zeros((lp.shape[0], 1))
    for i, T, labels in _ctc_items(lp, y_true, in_len, lab_len):
        # the rule of generic.ctc_steps_needed, on this node's numpy values
        if len(labels) + sum(a == b for a, b in zip(labels, labels[1:])) > T:
            raise ValueError(checks.runtime_check_message('ctc_batch_cost',
                                                          generic.CTC_TOO_SHORT))
        with np.errstate(divide='ignore', invalid='ignore'):
            out[i, 0] = -_ctc_alpha_beta(lp[i, :T], labels)[3]
    return [out]


def _ctc_grad_np(values, _, root):
    lp, y_true, in_len, lab_len = values
    g = np.zeros_like(lp, dtype=np.float64)
    for i, T, labels in _ctc_items(lp, y_true, in_len, lab_len):
        with np.errstate(divide='ignore', invalid='ignore'):
            a, b, ext, logp = _ctc_alpha_beta(lp[i, :T].astype(np.float64), labels)
            if not np.isfinite(logp):
                continue
            ab = a + b
            for k in set(ext):
                cols = [s for s, e in enumerate(ext) if e == k]
                occ = np.logaddexp.reduce(ab[:, cols], axis=1)
                g[i, :T, k] = -np.exp(occ - lp[i, :T, k] - logp)
        g[i] *= np.asarray(root).reshape(lp.shape[0], -1)[i, 0]
    return g


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """``log(y_pred + epsilon)`` is renormalised by a log-softmax in the graph; the CTC
    forward-backward runs in a numpy graph node (``UserFunction``) that also supplies the gradient
    and raises our ValueError where a label sequence does not fit its input (the rule of
    ``generic.ctc_steps_needed``). Blank is the last class."""
    y_pred = _to_tensor(y_pred)
    logits = C.log(y_pred + _constant_like(y_pred, epsilon()))
    lp = _log_softmax(logits, _nd(logits) - 1)
    ins = [lp, _to_tensor(y_true, dtype=dtype(y_pred)),
           _to_tensor(input_length, dtype=dtype(y_pred)),
           _to_tensor(label_length, dtype=dtype(y_pred))]
    return _numpy_op(ins, _ctc_loss_np, [(_static_shape(lp)[0], 1)],
                     dtype=np.dtype(_var(lp).dtype),
                     grad_fn=_ctc_grad_np, name='ctc_batch_cost')[0]


def _greedy_decode(logits, lengths):
    paths, scores = [], []
    blank = logits.shape[2] - 1
    for i in range(logits.shape[0]):
        T = int(lengths[i])
        best = logits[i, :T].argmax(axis=1)
        scores.append(-logits[i, :T].max(axis=1).sum())
        out, prev = [], None
        for c in best:
            if c != prev and c != blank:
                out.append(int(c))
            prev = c
        paths.append(out)
    return [paths], np.asarray(scores).reshape(-1, 1)


def _beam_decode(logits, lengths, beam_width, top_paths, merge_repeated):
    log_probs = logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)
    return ctc_search.prefix_beam_search(log_probs, lengths, beam_width, top_paths,
                                          merge_repeated)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """A numpy graph node does the search; decoded labels are integer values held in ``floatx()``,
    padded with -1 to at least one column (CNTK holds no zero-size value)."""
    if greedy:
        top_paths = 1
    top_paths, beam_width = int(top_paths), int(beam_width)
    y_pred = _to_tensor(y_pred)
    logits = C.log(y_pred + _constant_like(y_pred, epsilon()))
    lengths = _to_tensor(input_length, dtype=dtype(y_pred))

    def run(lg, ln):
        ln = ln.reshape(-1)
        if greedy:
            paths, scores = _greedy_decode(lg, ln)
        else:
            paths, scores = _beam_decode(lg, ln, beam_width, top_paths, merge_repeated)
        # CNTK aborts on zero-size values: keep at least one (-1) column.
        outs = [ctc_search.pad_labellings(plist, np.float64, min_width=1) for plist in paths]
        return outs + [scores]
    nb = _static_shape(y_pred)[0]
    shapes = [(nb, None)] * top_paths + [(nb, 1 if greedy else top_paths)]
    outs = _numpy_op([logits, lengths], run, shapes, dtype=np.dtype(_var(logits).dtype),
                     name='ctc_decode')
    return list(outs[:top_paths]), outs[top_paths]
