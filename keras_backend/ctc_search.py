"""CTC prefix beam search, on numpy arrays.

This is the body of the graph ops that engines without a beam-search op add
through their own extension point (a Theano/PyTensor ``Op``, a CNTK
``UserFunction``): the op receives the engine's log-probabilities at run time
and returns its labellings into the graph. TensorFlow uses its own
``tf.nn.ctc_beam_search_decoder`` instead.
"""
import numpy as np


def prefix_beam_search(log_probs, lengths, beam_width, top_paths, merge_repeated):
    """CTC prefix beam search over a batch; blank is the last class.

    Args:
        log_probs: numpy (batch, T, C) log-probabilities (log-softmax applied).
        lengths: numpy (batch,) valid time steps per sample (clipped to [0, T]).
        beam_width: prefixes kept after each step.
        top_paths: labellings returned per sample.
        merge_repeated: merge repeated labels of each returned labelling.

    Returns:
        (paths, scores): ``paths[k][b]`` the k-th best labelling of sample b (a
        tuple of ints; empty when fewer exist), ``scores`` (batch, top_paths)
        float64 log probabilities of the labellings (-inf when missing).
    """
    batch, steps, n_classes = log_probs.shape
    blank = n_classes - 1
    paths = [[()] * batch for _ in range(top_paths)]
    scores = np.full((batch, top_paths), -np.inf)
    for b in range(batch):
        n = min(max(int(lengths[b]), 0), steps)
        beams = {(): (0.0, -np.inf)}  # prefix -> (log p ending in blank, in non-blank)
        for t in range(n):
            row = log_probs[b, t]
            nxt = {}

            def add(prefix, pb, pnb):
                ob, onb = nxt.get(prefix, (-np.inf, -np.inf))
                nxt[prefix] = (np.logaddexp(ob, pb), np.logaddexp(onb, pnb))

            for prefix, (pb, pnb) in beams.items():
                total = np.logaddexp(pb, pnb)
                add(prefix, total + row[blank], -np.inf)
                last = prefix[-1] if prefix else None
                for c in range(n_classes - 1):
                    if c == last:   # a repeat needs a blank in between to count twice
                        add(prefix, -np.inf, pnb + row[c])
                        add(prefix + (c,), -np.inf, pb + row[c])
                    else:
                        add(prefix + (c,), -np.inf, total + row[c])
            ranked = sorted(nxt.items(), key=lambda kv: -np.logaddexp(*kv[1]))
            beams = dict(ranked[:beam_width])
        ranked = sorted(beams.items(), key=lambda kv: -np.logaddexp(*kv[1]))
        for k, (seq, (pb, pnb)) in enumerate(ranked[:top_paths]):
            if merge_repeated:
                seq = tuple(c for i, c in enumerate(seq) if i == 0 or c != seq[i - 1])
            paths[k][b] = seq
            scores[b, k] = np.logaddexp(pb, pnb)
    return paths, scores


def pad_labellings(labellings, dtype, min_width=0):
    """Stack labellings (tuples of ints) into a (len, max_len) array padded with -1."""
    width = max([len(s) for s in labellings] + [min_width])
    dense = np.full((len(labellings), width), -1, dtype=dtype)
    for i, s in enumerate(labellings):
        dense[i, :len(s)] = s
    return dense
