"""CTC on PyTorch: the engine-level functions of the names of
:mod:`keras_backend.api.ctc`, in reference order.

Their argument rules and docstrings are there; these are unchecked and call each other
directly (the package puts each behind its checks).
"""
import numpy as np

from .. import checks, common, generic
from . import math as _math, shapes as _shapes, tensors as _tensors
from .core import (torch, Tensor, _apply, _apply_multi, _flatten, _node, _PROBING,
                   _shaped_node, _to_tensor, _trim_decoded)
from .tensors import _engine_int_shape

_steps_needed = generic.ctc_steps_needed(generic.namespace(_tensors, _shapes, _math))


def ctc_label_dense_to_sparse(labels, label_lengths):
    """PyTorch's sparse tensors hold no labels' lengths: the labels are held dense, zero
    past each length (``is_sparse`` is True, ``to_dense`` gives them)."""
    labels, lengths = _to_tensor(labels), _to_tensor(label_lengths)

    def op(lab, ln):
        ln = torch.reshape(ln, (-1,))
        keep = torch.arange(lab.shape[1], device=lab.device)[None, :] < ln[:, None]
        return torch.where(keep, lab, torch.zeros((), dtype=lab.dtype, device=lab.device))
    out = _apply(op, labels, lengths)
    if not isinstance(out, Tensor):
        out = _constant_node(out)
    out._sparse = True
    return out


def _constant_node(value):
    """A graph node holding a concrete value (it can carry attributes a tensor can too,
    but a node keeps it symbolic as on the other engines)."""
    return _node(lambda: value, [], _flatten(())[1])


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """``torch.nn.functional.ctc_loss`` (``reduction='none'``, blank the last class) on
    ``log_softmax(log(y_pred + epsilon))``; ``(samples, 1)``; raises our ValueError where a
    label sequence does not fit its input (the rule of ``generic.ctc_steps_needed``)."""
    eps = common.epsilon()
    y_true, y_pred = _to_tensor(y_true), _to_tensor(y_pred)
    input_length, label_length = _to_tensor(input_length), _to_tensor(label_length)
    needed = _steps_needed(y_true, label_length)

    def op(yt, yp, il, ll, need):
        il = torch.reshape(il, (-1,)).long()
        ll = torch.reshape(ll, (-1,)).long()
        if not _PROBING[0] and not bool(torch.all(torch.reshape(need, (-1,)) <= il)):
            raise ValueError(checks.runtime_check_message('ctc_batch_cost',
                                                          generic.CTC_TOO_SHORT))
        lp = torch.log_softmax(torch.log(yp + eps), dim=-1)
        targets = yt.long().clamp(min=0)
        loss = torch.nn.functional.ctc_loss(lp.transpose(0, 1), targets, il, ll,
                                            blank=yp.shape[-1] - 1, reduction='none')
        return loss[:, None].to(yp.dtype)
    args = (y_true, y_pred, input_length, label_length, needed)
    if not any(isinstance(a, Tensor) for a in args):
        try:
            return op(*args)
        except ValueError as e:
            raise checks.engine_error('ctc_batch_cost', e) from e
    return _shaped_node(op, args, (_engine_int_shape(y_pred)[0], 1), y_pred.dtype
                        if isinstance(y_pred, Tensor) else str(y_pred.dtype).split('.')[-1])


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1,
               merge_repeated=False):
    """Greedy: ``argmax`` per step with repeats and blanks removed, in ``torch`` ops.
    Beam: the shared prefix search (:mod:`keras_backend.ctc_search`) as a PyTorch op of its
    own (``keras_backend::ctc_beam_search``, ``torch.library``). Decoded labels are int64,
    padded with -1."""
    y_pred, input_length = _to_tensor(y_pred), _to_tensor(input_length)
    eps = common.epsilon()
    if greedy:
        def op(yp, il):
            lp = torch.log(yp + eps)
            il = torch.reshape(il, (-1,)).long()
            n, t_max, n_c = lp.shape
            best = torch.argmax(lp, dim=-1)
            steps = torch.arange(t_max, device=lp.device)[None, :]
            inside = steps < il[:, None]
            prev = torch.cat([torch.full((n, 1), -1, dtype=best.dtype, device=lp.device),
                              best[:, :-1]], dim=1)
            keep = inside & (best != n_c - 1) & (best != prev)
            order = torch.argsort((~keep).to(torch.int8), dim=1, stable=True)
            dec = torch.gather(best, 1, order)
            count = torch.sum(keep.long(), dim=1)
            dec = torch.where(steps < count[:, None], dec,
                              torch.full((), -1, dtype=dec.dtype, device=lp.device)).long()
            score = -torch.sum(torch.where(inside, torch.amax(lp, dim=-1),
                                           torch.zeros((), dtype=lp.dtype, device=lp.device)),
                               dim=1)
            return dec, score[:, None].to(yp.dtype)
        dec, score = _apply_multi(op, 2, y_pred, input_length)
        return [_decoded_width(dec, y_pred)], score

    def op(yp, il):
        lp = torch.log(yp + eps)
        lp = lp - torch.logsumexp(lp, dim=2, keepdim=True)
        il = torch.reshape(il, (-1,)).long()
        if _PROBING[0] and lp.device.type != 'meta':      # a shape probe on concrete values
            lp, il = lp.to('meta'), il.to('meta')
        dec, score = _beam_search(lp, il, int(beam_width), int(top_paths), bool(merge_repeated))
        return dec, score.to(yp.dtype)
    dec, score = _apply_multi(op, 2, y_pred, input_length)
    paths = [_decoded_width(dec[k], y_pred) for k in range(top_paths)]
    return paths, score


def _decoded_width(dec, y_pred):
    """A decoding padded with -1 to the input's steps: cut to its longest path at once
    when concrete, else when the ``function`` computing it returns (its width depends
    on the values, so the graph holds it at full width and declares it unknown)."""
    if not isinstance(dec, Tensor):
        return torch.from_numpy(_trim_decoded(dec))
    out = _shaped_node(lambda d: d, (dec,), (_engine_int_shape(y_pred)[0], None), 'int64')
    out._trim_decoded = True
    return out


@torch.library.custom_op('keras_backend::ctc_beam_search', mutates_args=())
def _beam_search(log_probs: torch.Tensor, lengths: torch.Tensor, beam_width: int,
                 top_paths: int, merge_repeated: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """CTC prefix beam search as a PyTorch op (``torch.library``, PyTorch's extension point
    for an op it lacks): the shared search of :mod:`keras_backend.ctc_search` runs as the op's
    CPU kernel.

    Args:
        log_probs: float tensor ``(samples, steps, classes)``, normalised log-probabilities,
            blank last.
        lengths: int64 tensor ``(samples,)``, each sample's steps.
        beam_width, top_paths, merge_repeated: as ``K.ctc_decode``'s.

    Returns:
        ``(paths, scores)``: int64 ``(top_paths, samples, steps)`` padded with -1, and the
        float64 log-probabilities ``(samples, top_paths)``.
    """
    from .. import ctc_search
    n, t_max, _ = log_probs.shape
    lp = log_probs.detach().to('cpu', torch.float64).numpy()
    lens = np.clip(lengths.detach().cpu().numpy().astype(int), 0, t_max)
    found, scores = ctc_search.prefix_beam_search(lp, lens, beam_width, top_paths,
                                                  merge_repeated)
    dec = torch.full((top_paths, n, t_max), -1, dtype=torch.int64)
    for k in range(top_paths):
        for b in range(n):
            path = found[k][b]
            if len(path):
                dec[k, b, :len(path)] = torch.as_tensor(path, dtype=torch.int64)
    return (dec.to(log_probs.device),
            torch.as_tensor(np.asarray(scores, np.float64)).to(log_probs.device))


@_beam_search.register_fake
def _beam_search_shapes(log_probs, lengths, beam_width, top_paths, merge_repeated):
    n, t_max, _ = log_probs.shape
    return (log_probs.new_empty((top_paths, n, t_max), dtype=torch.int64),
            log_probs.new_empty((n, top_paths), dtype=torch.float64))
