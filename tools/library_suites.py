"""Run public Keras 2 libraries' own test suites (from their PyPI sdists) against one backend.

Keras 2 code is more than Keras: libraries of layers written against ``import keras`` and
``keras.backend`` ship test suites of their own, which exercise the backend API the way their
users do (custom layers' ``call`` and ``compute_mask``, saving and loading with custom
objects, ``K.function`` and gradients of their outputs). ``LIBRARIES`` pins the last release
of each that still imports Keras 2 (``import keras``; later releases import
``tensorflow.keras`` only).

Usage::

    python3 tools/library_suites.py fetch DIR
        download each library's sdist (pip download, no dependencies) and extract it
        into DIR/<name>-<version> (nothing of it is committed);

    python3 tools/library_suites.py run --dir DIR --python PY --backend MODULE
            --config NAME [--keras-path P] [--library NAME] [--part all|quick]
            [--junit-dir D]
        run each library's ``tests/`` with ``PY -m pytest``, ``KERAS_BACKEND=MODULE`` (one
        of our adapters, or ``tensorflow`` / ``theano`` / ``cntk`` for Keras' own backend,
        the anchor run), every library of DIR on ``PYTHONPATH`` (they import each other),
        a fresh ``KERAS_HOME``, and the known differences of ``KNOWN`` for configuration
        NAME marked as expected failures (``tools/keras_suite_plugin.py`` reads them). Prints
        one line per library and a total; exits 1 when a test not known failed.
        ``--part quick`` (CI's) leaves out the tests that train for thousands of steps
        (``LONG_TRAININGS``).

Keras 2.3.1 must be importable by PY: installed in it (the CPython 3.6 environment), or in
the folder given with ``--keras-path`` (Python 3.11: ``.venv/keras2``).
"""
from __future__ import print_function

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KNOWN = os.path.join(REPO, 'tests', 'library_suites_known_differences.txt')

sys.path.insert(0, HERE)
from keras_suite import download_sdist, outcomes  # noqa: E402
from keras_suite_plugin import read_known  # noqa: E402

#: (PyPI name, version): the last release of each that imports Keras 2 (``import keras``
#: unless ``TF_KERAS=1``), with its ``tests/`` in the sdist
LIBRARIES = (
    ('keras-self-attention', '0.46.0'),
    ('keras-multi-head', '0.27.0'),
    ('keras-layer-normalization', '0.14.0'),
    ('keras-pos-embd', '0.11.0'),
    ('keras-position-wise-feed-forward', '0.6.0'),
    ('keras-embed-sim', '0.8.0'),
)

#: library -> its tests that train for thousands of steps (fit_generator of 10 x 1000 or
#: 100 x 100 steps, stopped early): the ``all`` part runs them (by hand, minutes per
#: engine), the ``quick`` part (CI's) leaves them out
LONG_TRAININGS = {
    'keras-layer-normalization': (
        'tests/test_layer_normalization.py::TestLayerNormalization::test_fit',
        'tests/test_layer_normalization.py::TestLayerNormalization::test_fit_zeros'),
    'keras-multi-head': (
        'tests/test_mapping.py::TestMultiHead::test_multi_attention',
        'tests/test_multi_head.py::TestMultiHead::test_multi_attention',
        'tests/test_multi_head.py::TestMultiHead::test_multi_cnn',
        'tests/test_multi_head_attention.py::TestMultiHead::test_fit_self',
        'tests/test_multi_head_attention.py::TestMultiHead::test_fit_multi',
        'tests/test_regularization.py::TestRegularization::test_multi_lstm'),
    'keras-position-wise-feed-forward': (
        'tests/test_feed_forward.py::TestFeedForward::test_fit',),
}


def _folder(dest, name, version):
    return os.path.join(dest, '%s-%s' % (name, version))


def fetch(dest):
    """Download and extract every library of ``LIBRARIES`` into ``dest``."""
    if not os.path.isdir(dest):
        os.makedirs(dest)
    for name, version in LIBRARIES:
        folder = _folder(dest, name, version)
        if os.path.isdir(os.path.join(folder, 'tests')):
            continue
        tmp = tempfile.mkdtemp(prefix='library-sdist-')
        try:
            archive = download_sdist('%s==%s' % (name, version), tmp)
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if member.name.startswith('/') or '..' in member.name.split('/'):
                        raise SystemExit('library_suites: unsafe path %r in %s'
                                         % (member.name, archive))
                tar.extractall(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if not os.path.isdir(os.path.join(folder, 'tests')):
            raise SystemExit('library_suites: %s has no tests/ folder' % folder)
        print('library_suites: %s==%s in %s' % (name, version, folder))


def _tally(junit):
    """(passed, failed, skipped, known) of a pytest JUnit XML file."""
    counts, _ = outcomes(junit)
    return counts['passed'], counts['failed'], counts['skipped'], counts['known']


def run(args):
    dest = os.path.abspath(args.dir)
    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    chosen = [(n, v) for n, v in LIBRARIES if not args.library or n in args.library]
    if not chosen:
        raise SystemExit('library_suites: no library named %s' % ', '.join(args.library))
    roots = [_folder(dest, n, v) for n, v in LIBRARIES]
    missing = [r for r in roots if not os.path.isdir(os.path.join(r, 'tests'))]
    if missing:
        raise SystemExit('library_suites: run "fetch %s" first (missing %s)'
                         % (args.dir, ', '.join(missing)))
    junit_dir = args.junit_dir or tempfile.mkdtemp(prefix='library-suites-')
    if not os.path.isdir(junit_dir):
        os.makedirs(junit_dir)
    known = read_known(KNOWN, args.config)
    total, bad = [0, 0, 0, 0], False
    for name, version in chosen:
        root = _folder(dest, name, version)
        home = tempfile.mkdtemp(prefix='library-suite-home-')
        env = dict(os.environ)
        path = ([os.path.abspath(args.keras_path)] if args.keras_path else []) + \
            [REPO, HERE] + roots + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else [])
        env.update(PYTHONPATH=os.pathsep.join(path), KERAS_BACKEND=args.backend,
                   KERAS_HOME=home, TF_KERAS='0', KERAS_SUITE_CONFIG=args.config,
                   KERAS_SUITE_KNOWN=KNOWN, KERAS_BACKEND_QUIET='1')
        env.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
        junit = os.path.join(junit_dir, '%s-%s.xml' % (name, args.config))
        cmd = [python, '-m', 'pytest', 'tests', '-p', 'keras_suite_plugin',
               '-p', 'no:cacheprovider', '-q', '-rfE', '--junitxml', junit]
        for test in sorted(t for t in known if '::' not in t and
                           os.path.exists(os.path.join(root, t))):
            # a file that cannot be imported here is a collection error, which no marker
            # can expect: left out, and said so
            print('library_suites: KNOWN DIFFERENCE, not run: %s %s (%s)'
                  % (name, test, known[test]))
            cmd += ['--ignore', test]
        if args.part == 'quick':
            for test in LONG_TRAININGS.get(name, ()):
                cmd += ['--deselect', test]
        try:
            rc = subprocess.call(cmd, cwd=root, env=env,
                                 stdout=None if args.verbose else subprocess.DEVNULL,
                                 stderr=subprocess.STDOUT)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        counts = _tally(junit) if os.path.exists(junit) else None
        if counts is None:
            print('%-34s no report (pytest exit %d)' % ('%s %s' % (name, version), rc))
            bad = True
            continue
        total = [a + b for a, b in zip(total, counts)]
        bad = bad or counts[1] > 0 or rc not in (0, 5)
        print('%-34s %4d passed %3d failed %3d skipped %3d known' %
              (('%s %s' % (name, version),) + counts))
    print('%-34s %4d passed %3d failed %3d skipped %3d known  (%s, %s, part %s)' %
          (('all',) + tuple(total) + (args.config, args.backend, args.part)))
    return 1 if bad else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command')
    p_fetch = sub.add_parser('fetch')
    p_fetch.add_argument('dir')
    p_run = sub.add_parser('run')
    p_run.add_argument('--dir', required=True)
    p_run.add_argument('--python', default=sys.executable)
    p_run.add_argument('--backend', required=True)
    p_run.add_argument('--config', required=True)
    p_run.add_argument('--keras-path', default='')
    p_run.add_argument('--library', action='append', default=[])
    p_run.add_argument('--part', choices=('all', 'quick'), default='all')
    p_run.add_argument('--junit-dir', default='')
    p_run.add_argument('--verbose', action='store_true')
    args = parser.parse_args(argv)
    if args.command == 'fetch':
        fetch(args.dir)
        return 0
    if args.command == 'run':
        return run(args)
    parser.print_help()
    return 2


if __name__ == '__main__':
    sys.exit(main())
