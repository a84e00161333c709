"""CTC on JAX: the engine-level functions of the names of
:mod:`keras_backend.api.ctc`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import checks, common, generic
from . import math as _math, shapes as _shapes, tensors as _tensors
from .core import (jax, jnp, Tensor, _apply, _apply_multi, _node, _RUNTIME_ERROR, _shaped_node,
                   _to_tensor, _trim_decoded)
from .tensors import _engine_int_shape

from jax import lax  # noqa: E402  (core imported it, or said how to install it)

_steps_needed = generic.ctc_steps_needed(generic.namespace(_tensors, _shapes, _math))


def ctc_label_dense_to_sparse(labels, label_lengths):
    """JAX has no integer sparse tensor: the labels are held dense, zero past each length
    (``is_sparse`` is True, ``to_dense`` gives them)."""
    labels, lengths = _to_tensor(labels), _to_tensor(label_lengths)

    def op(lab, ln):
        ln = jnp.reshape(ln, (-1,))
        keep = jnp.arange(lab.shape[1])[None, :] < ln[:, None]
        return jnp.where(keep, lab, jnp.zeros((), lab.dtype))
    out = _apply(op, labels, lengths)
    if not isinstance(out, Tensor):
        out = _constant_node(out)
    out._sparse = True
    return out


def _constant_node(value):
    """A graph node holding a concrete value (it can carry attributes an array cannot)."""
    return _node(lambda: value, [], jax.tree_util.tree_structure(()))


def _ctc_loss_one(lp, labels, t_len, l_len):
    """-log p(labels | lp) for one sample: lp (T, C) log-probs, blank = C - 1."""
    n_t, n_c = lp.shape
    blank = n_c - 1
    max_l = labels.shape[0]
    ext = jnp.full((2 * max_l + 1,), blank, dtype='int32')
    ext = ext.at[1::2].set(labels.astype('int32'))
    s_len = 2 * l_len + 1
    pos = jnp.arange(2 * max_l + 1)
    valid = pos < s_len
    prev2 = jnp.concatenate([jnp.full((2,), -1, 'int32'), ext[:-2]])
    skip_ok = (ext != blank) & (ext != prev2) & (pos >= 2)
    neg = jnp.asarray(-1e30, lp.dtype)
    emit0 = lp[0, ext]
    alpha0 = jnp.where((pos < 2) & valid, emit0, neg)

    def step(alpha, t):
        a1 = jnp.concatenate([jnp.full((1,), neg), alpha[:-1]])
        a2 = jnp.concatenate([jnp.full((2,), neg), alpha[:-2]])
        a2 = jnp.where(skip_ok, a2, neg)
        new = jnp.logaddexp(jnp.logaddexp(alpha, a1), a2) + lp[t, ext]
        new = jnp.where(valid, new, neg)
        new = jnp.where(t < t_len, new, alpha)
        return new, None
    alpha, _ = lax.scan(step, alpha0, jnp.arange(1, n_t))
    last = alpha[jnp.maximum(s_len - 1, 0)]
    before = jnp.where(s_len >= 2, alpha[jnp.maximum(s_len - 2, 0)], neg)
    return -jnp.logaddexp(last, before)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC forward recursion in log space (``lax.scan``, ``vmap`` over the batch) on
    ``log_softmax(log(y_pred + epsilon))``; blank is the last class; ``(samples, 1)``;
    a ``jax.pure_callback`` raises our ValueError where a label sequence does not fit its
    input (the rule of ``generic.ctc_steps_needed``)."""
    eps = common.epsilon()
    needed = _steps_needed(_to_tensor(y_true), _to_tensor(label_length))

    def op(yt, yp, il, ll, need):
        lp = jax.nn.log_softmax(jnp.log(yp + eps), axis=-1)
        il = jnp.reshape(il, (-1,)).astype('int32')
        ll = jnp.reshape(ll, (-1,)).astype('int32')
        loss = jax.vmap(_ctc_loss_one)(lp, yt, il, ll)[:, None].astype(yp.dtype)
        # a sequence that does not fit its input: our ValueError at run time
        fits = lax.stop_gradient(jnp.all(jnp.reshape(need, (-1,)) <= il))
        zero = jax.pure_callback(_raise_unless_fits, jax.ShapeDtypeStruct((), loss.dtype),
                                 fits)
        return loss + lax.stop_gradient(zero)
    try:
        return _apply(op, _to_tensor(y_true), _to_tensor(y_pred), _to_tensor(input_length),
                      _to_tensor(label_length), needed)
    except _RUNTIME_ERROR as e:        # known values: computed now
        raise checks.engine_error('ctc_batch_cost', e) from e


def _raise_unless_fits(fits):
    """The host side of ctc_batch_cost's check (``jax.pure_callback``): 0, or ValueError."""
    if not bool(np.asarray(fits)):
        raise ValueError(checks.runtime_check_message('ctc_batch_cost', generic.CTC_TOO_SHORT))
    return np.zeros((), np.float32)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Greedy: ``argmax`` per step with repeats and blanks removed, in JAX ops. Beam: the
    shared prefix search (:mod:`keras_backend.ctc_search`) through ``jax.pure_callback``.
    Decoded labels are int64, padded with -1."""
    y_pred, input_length = _to_tensor(y_pred), _to_tensor(input_length)
    eps = common.epsilon()
    if greedy:
        def op(yp, il):
            lp = jnp.log(yp + eps)
            il = jnp.reshape(il, (-1,)).astype('int32')
            n, t_max, n_c = lp.shape
            best = jnp.argmax(lp, axis=-1)
            steps = jnp.arange(t_max)[None, :]
            inside = steps < il[:, None]
            prev = jnp.concatenate([jnp.full((n, 1), -1, best.dtype), best[:, :-1]], axis=1)
            keep = inside & (best != n_c - 1) & (best != prev)
            order = jnp.argsort(~keep, axis=1, stable=True)
            dec = jnp.take_along_axis(best, order, axis=1)
            count = jnp.sum(keep, axis=1)
            dec = jnp.where(steps < count[:, None], dec, -1).astype('int64')
            score = -jnp.sum(jnp.where(inside, jnp.max(lp, axis=-1), 0.), axis=1)
            return dec, score[:, None].astype(yp.dtype)
        dec, score = _apply_multi(op, 2, y_pred, input_length)
        return [_decoded_width(dec, y_pred)], score

    def op(yp, il):
        lp = jnp.log(yp + eps)
        n, t_max, _ = lp.shape
        out_shapes = (jax.ShapeDtypeStruct((top_paths, n, t_max), np.int64),
                      jax.ShapeDtypeStruct((n, top_paths), yp.dtype))

        def host(lp_np, il_np):
            from .. import ctc_search
            lp_np = np.asarray(lp_np, np.float64)
            lp_np = lp_np - np.logaddexp.reduce(lp_np, axis=2, keepdims=True)
            lens = np.clip(np.asarray(il_np).reshape(-1).astype(int), 0, t_max)
            paths, scores = ctc_search.prefix_beam_search(lp_np, lens, beam_width, top_paths,
                                                          merge_repeated)
            dec = np.full((top_paths, n, t_max), -1, np.int64)
            for k in range(top_paths):
                for b in range(n):
                    p = paths[k][b]
                    dec[k, b, :len(p)] = p
            return dec, np.asarray(-scores, dtype=yp.dtype) * -1
        return jax.pure_callback(host, out_shapes, lp, il)
    dec, score = _apply_multi(op, 2, y_pred, input_length)
    paths = [_decoded_width(dec[k], y_pred) for k in range(top_paths)]
    return paths, score


def _decoded_width(dec, y_pred):
    """A decoding padded with -1 to the input's steps: cut to its longest path at once
    when concrete, else when the ``function`` computing it returns (its width depends
    on the values, so the graph holds it at full width and declares it unknown)."""
    if not isinstance(dec, Tensor):
        return jnp.asarray(_trim_decoded(dec))
    out = _shaped_node(lambda d: d, (dec,), (_engine_int_shape(y_pred)[0], None), 'int64')
    out._trim_decoded = True
    return out
