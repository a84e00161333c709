"""Run the ``Example:`` of each API docstring (``keras_backend.api`` (``api.DOCS``)) on an engine.

Each name's examples run as a doctest with ``K`` (the adapter module) and
``np`` (numpy) in scope, in a fresh namespace, with the configuration
(floatx, epsilon, image data format, learning phase) restored afterwards.

The printed values must be the same on every engine, but engines differ in
the *type* that carries them (TensorFlow and Theano return int64 where CNTK,
which has no integer tensors, returns float32; numpy 2 prints scalars as
``np.float32(1.0)`` where numpy 1 prints ``1.0``). So an output that does not
match the text exactly is also accepted when both texts evaluate (with numpy's
names in scope) to values of the same structure and shape that agree to
``atol=rtol=1e-5``.

Command line (to check docs while writing them)::

    python tests/doc_examples.py --engine tensorflow [NAME ...]
"""
import argparse
import doctest
import importlib
import os
import sys

import numpy as np

from keras_backend import engines

ATOL = RTOL = 1e-5

_EVAL_NAMES = {
    'array': np.array, 'np': np, 'numpy': np, 'nan': np.nan, 'inf': np.inf,
    'float16': np.float16, 'float32': np.float32, 'float64': np.float64,
    'int8': np.int8, 'int16': np.int16, 'int32': np.int32, 'int64': np.int64,
    'uint8': np.uint8, 'bool_': np.bool_, 'bool': bool, 'dtype': np.dtype,
    'True': True, 'False': False, 'None': None,
}


def _parse(text):
    try:
        return True, eval(text.strip(), {'__builtins__': {}}, dict(_EVAL_NAMES))
    except Exception:
        return False, None


def values_agree(a, b):
    """Same structure and (numerically) the same values, dtype aside."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_agree(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(values_agree(a[k], b[k]) for k in a)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is b
    try:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and np.allclose(x, y, atol=ATOL, rtol=RTOL, equal_nan=True)


class NumericOutputChecker(doctest.OutputChecker):
    def check_output(self, want, got, optionflags):
        if doctest.OutputChecker.check_output(self, want, got, optionflags):
            return True
        ok_w, w = _parse(want)
        ok_g, g = _parse(got)
        return ok_w and ok_g and values_agree(w, g)


def load_docs(path=None):
    """{name: docstring} from ``keras_backend.api`` (``api.DOCS``) or a file defining ``DOCS``."""
    if path is None:
        from keras_backend import api
        return dict(api.DOCS)
    namespace = {}
    with open(path) as f:
        exec(compile(f.read(), path, 'exec'), namespace)
    return dict(namespace['DOCS'])


def _saved_state(K):
    from keras_backend import common
    return (common.floatx(), common.epsilon(), common.image_data_format(),
            common._FIXED_LEARNING_PHASE)


def _restore_state(saved):
    from keras_backend import common
    common.set_floatx(saved[0])
    common.set_epsilon(saved[1])
    common.set_image_data_format(saved[2])
    common._FIXED_LEARNING_PHASE = saved[3]


def run_examples(K, name, doc):
    """Run the doctest examples of ``doc``; return (n_examples, failure report or '')."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, {'K': K, 'np': np}, name, None, 0)
    if not test.examples:
        return 0, ''
    lines = []
    runner = doctest.DocTestRunner(checker=NumericOutputChecker(), verbose=False,
                                   optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    saved = _saved_state(K)
    try:
        runner.run(test, out=lines.append, clear_globs=True)
    finally:
        _restore_state(saved)
    result = runner.summarize(verbose=False)
    return len(test.examples), ''.join(lines) if result.failed else ''


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--engine', required=True, choices=engines.names())
    parser.add_argument('--docs-file', help='a file defining DOCS (default: keras_backend.api.DOCS)')
    parser.add_argument('names', nargs='*', help='API names (default: all documented)')
    args = parser.parse_args(argv)
    os.environ.setdefault('KERAS_BACKEND_QUIET', '1')
    K = importlib.import_module(engines.adapter_module(args.engine))
    docs = load_docs(args.docs_file)
    names = args.names or sorted(docs)
    failed = 0
    total = 0
    for name in names:
        if name not in docs:
            print('%s: no docstring' % name)
            failed += 1
            continue
        n, report = run_examples(K, name, docs[name])
        total += n
        if not n:
            print('%s: no example' % name)
            failed += 1
        elif report:
            print(report)
            failed += 1
    print('%s: %d name(s), %d example line(s), %d failed' % (args.engine, len(names), total, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
