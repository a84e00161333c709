"""Run Keras 2.3.1's own test suite (from its PyPI sdist) against one backend.

Usage::

    python3 tools/keras_suite.py fetch DIR [--release R]
        download keras==R's source distribution (default 2.3.1) from PyPI (pip download)
        and extract its ``tests/`` tree into DIR/tests (nothing of it is committed);

    python3 tools/keras_suite.py run --tests DIR --python PY --backend MODULE
            --config NAME [--release R] [--part PART] [--junit FILE] [--workers N]
            [-- PYTEST_ARGS]
        run PART of that tree (default ``all``) with ``PY -m pytest``, with
        ``KERAS_BACKEND=MODULE`` (one of our adapters, ``keras_backend.<engine>_backend``,
        or one of Keras' own backends, ``tensorflow`` / ``cntk`` / ``theano``, for the
        anchor run), the known differences of release R (``KNOWN_FILES``) for
        configuration NAME marked as expected failures, and a fresh ``KERAS_HOME`` (and,
        for 2.0.x and 2.1.x, which read ``~/.keras`` only, a fresh ``HOME``);

    python3 tools/keras_suite.py parts
        list the named parts and their files.

The whole tree is every file of ``tests/keras/**`` and ``tests/test_*.py`` that
needs no network download (``tests/keras/datasets`` downloads the data sets).
PyTensor and Theano 1.0.5 are compile-bound (each new graph is C code compiled
with g++), so CI runs a fixed part there (``PARTS``); the whole tree is run by
hand and its figures go in the issue's closing note.

Keras R must be importable by PY: installed in it (CPython 3.6: 2.3.1), or in a
folder given with ``--keras-path`` (Python 3.11: ``.venv/keras2`` for 2.3.1,
``.venv/keras-<R>`` for the older releases; put first on ``PYTHONPATH``). On our adapters
the suite's plugin calls ``keras_backend.keras2_compat.install()`` before Keras is imported
(the line Keras 2.0.x and 2.1.x need to load an external backend).
"""
from __future__ import print_function

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KNOWN = os.path.join(REPO, 'tests', 'keras_suite_known_differences.txt')
PLUGIN = 'keras_suite_plugin'

#: The releases whose suites run here, newest first; 2.3.1 is the default.
RELEASES = ('2.3.1', '2.2.4', '2.1.6', '2.0.8')
#: release -> its known-differences file (the same format for each)
KNOWN_FILES = dict([('2.3.1', KNOWN)] + [
    (r, os.path.join(REPO, 'tests', 'keras_suite_known_differences_%s.txt' % r))
    for r in RELEASES[1:]])

#: Files that need a network download (never run).
NETWORK = ('tests/keras/datasets', 'tests/integration_tests/test_datasets.py')

#: Named parts of the tree; 'all' is every file.
PARTS = {
    # What CI runs on the compile-bound engines (PyTensor, Theano 1.0.5; every new
    # graph is C code compiled with g++, about 5x the warm time on a fresh machine): the
    # activations, the core, merge, noise and embedding layers, constraints, trainability
    # and loss masking whole, and one test of every other file of the tree (a pytest node
    # id), so that no file goes unseen there: for each, a test that builds or trains what
    # the file is about, among the cheaper ones of the whole-tree run on PyTensor
    # (ConvLSTM2D with a mask in channels_first; the transposed convolution with 'full'
    # padding and output_padding). A file whose tests all skip on Theano (TensorFlow
    # only) or fail on Keras' own backends too (known differences) keeps its one test.
    'compile-bound': (
        'tests/keras/activations_test.py',
        'tests/keras/constraints_test.py',
        'tests/keras/layers/advanced_activations_test.py',
        'tests/keras/layers/core_test.py',
        'tests/keras/layers/embeddings_test.py',
        'tests/keras/layers/merge_test.py',
        'tests/keras/layers/noise_test.py',
        'tests/test_dynamic_trainability.py',
        'tests/test_loss_masking.py',
        'tests/keras/backend/backend_test.py::TestBackend::test_conv'
        '[conv2d-input_shape6-kernel_shape6-same-channels_last]',
        'tests/keras/callbacks/callbacks_test.py::test_EarlyStopping',
        'tests/keras/callbacks/tensorboard_test.py::test_TensorBoard[epoch]',
        'tests/keras/engine/layer_subclassing_tests.py::test_sublayer_tracking',
        'tests/keras/engine/test_topology.py::test_preprocess_weights_for_loading[ConvLSTM2D]',
        'tests/keras/engine/test_training.py::test_fit_generator_shape',
        'tests/keras/initializers_test.py::test_orthogonal[FC]',
        'tests/keras/layers/convolutional_recurrent_test.py::test_convolutional_recurrent'
        '[True-False-channels_first]',
        'tests/keras/layers/convolutional_test.py::test_conv2d_transpose'
        '[full-out_padding11-strides11]',
        'tests/keras/layers/cudnn_recurrent_test.py::test_cudnn_rnn_basics',
        'tests/keras/layers/local_test.py::test_locallyconnected_1d',
        'tests/keras/layers/normalization_test.py::test_batchnorm_convnet',
        'tests/keras/layers/pooling_test.py::test_maxpooling_2d[strides0]',
        'tests/keras/layers/recurrent_test.py::test_masking_correctness[LSTM]',
        'tests/keras/layers/wrappers_test.py::test_TimeDistributed_learning_phase',
        'tests/keras/legacy/interface_test.py::test_atrousconv1d_legacy_interface',
        'tests/keras/legacy/layers_test.py::test_highway',
        'tests/keras/losses_test.py::TestLossClasses::test_objective_shapes_2d'
        '[BinaryCrossentropy]',
        'tests/keras/metrics_confusion_matrix_test.py::TestAUC::test_config',
        'tests/keras/metrics_correctness_test.py::TestMetricsCorrectnessMultiIO'
        '::test_fit_with_class_weight',
        'tests/keras/metrics_functional_test.py::test_metrics[binary_accuracy]',
        'tests/keras/metrics_test.py::TestAccuracy::test_accuracy',
        'tests/keras/metrics_training_test.py::test_training_and_eval[CategoricalAccuracy]',
        'tests/keras/optimizers_test.py::test_clipvalue',
        'tests/keras/regularizers_test.py::test_activity_regularization',
        'tests/keras/test_sequential_model.py::test_sequential',
        'tests/keras/utils/conv_utils_test.py::test_conv_output_length',
        'tests/keras/utils/data_utils_test.py::test_ordered_enqueuer_threads',
        'tests/keras/utils/generic_utils_test.py::test_custom_objects_scope',
        'tests/keras/utils/io_utils_test.py::test_H5Dict_accepts_pathlib_Path',
        'tests/keras/utils/layer_utils_test.py::test_convert_weights',
        'tests/keras/utils/multi_gpu_test.py::test_multi_gpu_simple_model',
        'tests/keras/utils/np_utils_test.py::test_to_categorical',
        'tests/keras/utils/vis_utils_test.py::test_plot_model',
        'tests/keras/wrappers/scikit_learn_test.py::test_classify_build_fn',
        'tests/test_loss_weighting.py::test_sequential_sample_weights',
        'tests/test_model_pickling.py::test_functional_model_pickling',
        'tests/test_model_saving.py::test_saving_right_after_compilation',
        'tests/test_multiprocessing.py::test_multiprocessing_evaluating',
        'tests/test_api.py',   # a known difference everywhere: named, never run
    ),
    # What CI runs on JAX (every model's train step is an XLA compile: the whole tree takes
    # about half an hour of both cores there): the backend test (our adapter in the place
    # of Keras' TensorFlow module), the engine's topology and Sequential models, metrics
    # and losses, the layers without recurrences, saving and pickling.
    'jax': (
        'tests/keras/activations_test.py',
        'tests/keras/backend/backend_test.py',
        'tests/keras/constraints_test.py',
        'tests/keras/engine/layer_subclassing_tests.py',
        'tests/keras/engine/test_topology.py',
        'tests/keras/layers/advanced_activations_test.py',
        'tests/keras/layers/core_test.py',
        'tests/keras/layers/embeddings_test.py',
        'tests/keras/layers/local_test.py',
        'tests/keras/layers/merge_test.py',
        'tests/keras/layers/noise_test.py',
        'tests/keras/layers/normalization_test.py',
        'tests/keras/layers/pooling_test.py',
        'tests/keras/losses_test.py',
        'tests/keras/metrics_correctness_test.py',
        'tests/keras/metrics_functional_test.py',
        'tests/keras/metrics_training_test.py',
        'tests/keras/regularizers_test.py',
        'tests/keras/test_sequential_model.py',
        'tests/keras/utils/layer_utils_test.py',
        'tests/test_dynamic_trainability.py',
        'tests/test_loss_masking.py',
        'tests/test_model_pickling.py',
        'tests/test_model_saving.py',
    ),
}

#: The part CI runs of each older release's tree on every engine configuration: its backend
#: test, core layers, the engine's topology and training, recurrent layers, optimizers, saving
#: and callbacks (what code pinned to that release exercises first).
OLDER_RELEASE_CI = (
    'tests/keras/backend/backend_test.py',
    'tests/keras/layers/core_test.py',
    'tests/keras/engine/test_topology.py',
    'tests/keras/engine/test_training.py',
    'tests/keras/optimizers_test.py',
    'tests/keras/test_sequential_model.py',
    'tests/test_model_saving.py',
    'tests/keras/test_callbacks.py',
)
for _release in RELEASES[1:]:
    PARTS['ci-' + _release] = OLDER_RELEASE_CI


def suite_files(root, part='all'):
    """The test files of ``part`` (or pytest node ids, ``file::test``), relative to ``root``
    (the folder holding ``tests/``)."""
    if part != 'all':
        return list(PARTS[part])
    found = sorted(glob.glob(os.path.join(root, 'tests', 'keras', '**', '*.py'), recursive=True))
    found += sorted(glob.glob(os.path.join(root, 'tests', 'test_*.py')))
    out = []
    for path in found:
        rel = os.path.relpath(path, root).replace(os.sep, '/')
        name = os.path.basename(rel)
        if rel.startswith(NETWORK) or name in ('conftest.py', '__init__.py'):
            continue
        if not (name.startswith('test_') or name.endswith('_test.py')
                or name.endswith('_tests.py')):
            continue
        out.append(rel)
    return out


def download_sdist(requirement, folder):
    """The path of ``requirement``'s source distribution, downloaded by pip (no
    dependencies) into ``folder``."""
    subprocess.check_call([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                           '--no-binary=:all:', '-d', folder, requirement])
    archives = glob.glob(os.path.join(folder, '*.tar.gz'))
    if len(archives) != 1:
        raise SystemExit('expected one sdist of %s, got %r' % (requirement, archives))
    return archives[0]


def fetch(dest, release='2.3.1'):
    """Download Keras ``release``'s sdist with pip and extract its tests/ into ``dest``
    (without the ``__pycache__`` folders that some sdists carry)."""
    if os.path.isdir(os.path.join(dest, 'tests', 'keras')):
        print('keras_suite: %s/tests already there' % dest)
        return
    tmp = tempfile.mkdtemp()
    try:
        archive = download_sdist('keras==' + release, tmp)
        os.makedirs(dest, exist_ok=True)
        top = 'Keras-%s/' % release
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(top + 'tests/')
                       and '__pycache__' not in m.name.split('/')]
            for m in members:
                m.name = m.name[len(top):]
            tar.extractall(dest, members)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('keras_suite: Keras %s tests in %s/tests' % (release, dest))


def run(args, pytest_args):
    if os.sep in args.python:
        args.python = os.path.abspath(args.python)
    if args.keras_path:
        args.keras_path = os.path.abspath(args.keras_path)
    env = dict(os.environ)
    env['KERAS_BACKEND'] = args.backend
    env['KERAS_HOME'] = tempfile.mkdtemp(prefix='keras_home_')
    if args.release in ('2.1.6', '2.0.8'):
        # these read ~/.keras/keras.json only (and write it when missing): a HOME of their
        # own; the engines' compile folders stay where the user's home has them
        for var in ('THEANO_FLAGS', 'PYTENSOR_FLAGS'):
            if 'base_compiledir' not in env.get(var, ''):
                base = os.path.join(os.path.expanduser('~'), '.' + var.split('_')[0].lower())
                env[var] = ','.join(f for f in (env.get(var), 'base_compiledir=' + base) if f)
        env['HOME'] = env['KERAS_HOME']
    env['KERAS_BACKEND_QUIET'] = '1'
    env['KERAS_SUITE_CONFIG'] = args.config
    known_file = KNOWN_FILES[args.release]
    env['KERAS_SUITE_KNOWN'] = known_file
    if args.backend.startswith('keras_backend.'):
        env['KERAS_SUITE_COMPAT'] = '1'
    paths = [HERE, REPO] + ([args.keras_path] if args.keras_path else [])
    if env.get('KERAS_SUITE_COMPAT') and args.release in ('2.1.6', '2.0.8'):
        # install() in every process of the run, spawned workers included (sitecustomize)
        paths.insert(0, os.path.join(HERE, 'keras_suite_site'))
    if env.get('PYTHONPATH'):
        paths.append(env['PYTHONPATH'])
    env['PYTHONPATH'] = os.pathsep.join(paths)
    sys.path.insert(0, HERE)
    from keras_suite_plugin import read_known
    known = read_known(known_file, args.config)
    files = []
    for rel in suite_files(args.tests, args.part):
        if args.file and rel.split('::')[0] not in args.file:
            continue
        reason = known.get(rel) or known.get(rel.split('::')[0])
        if reason is not None:
            print('keras_suite: KNOWN DIFFERENCE, not run: %s (%s)' % (rel, reason))
        else:
            files.append(rel)
    cmd = [args.python, '-m', 'pytest'] + files
    cmd += ['-p', PLUGIN, '-p', 'no:cacheprovider', '-q', '-rfE',
            '--timeout', str(args.timeout)]
    if args.workers > 1:
        cmd += ['-n', str(args.workers)]
    if args.junit:
        cmd += ['--junitxml', os.path.abspath(args.junit)]
    cmd += pytest_args
    print('keras_suite: %s' % ' '.join(cmd[:3] + ['<%s: %d files>' % (args.part, len(files))]
                                       + cmd[3 + len(files):]))
    sys.stdout.flush()
    return subprocess.call(cmd, cwd=args.tests, env=env)


def outcomes(path):
    """``({'passed', 'known', 'failed', 'skipped'}: counts, seconds)`` of a run's JUnit XML:
    known = the known differences that failed (xfail), failed = everything else that failed
    or errored (collection errors included)."""
    import xml.etree.ElementTree as ET
    counts = dict(passed=0, known=0, failed=0, skipped=0)
    seconds = 0.
    for suite in ET.parse(path).getroot().iter('testsuite'):
        seconds += float(suite.get('time') or 0)
    for case in ET.parse(path).getroot().iter('testcase'):
        if case.find('failure') is not None or case.find('error') is not None:
            counts['failed'] += 1
            continue
        skipped = case.find('skipped')
        if skipped is None:
            counts['passed'] += 1
        elif skipped.get('type') == 'pytest.xfail':
            counts['known'] += 1
        else:
            counts['skipped'] += 1
    return counts, seconds


def tally(path):
    """``| file | passed | known | failed | skipped | seconds |`` of a run's JUnit XML
    (:func:`outcomes`)."""
    counts, seconds = outcomes(path)
    return '| %s | %d | %d | %d | %d | %.0f |' % (
        os.path.basename(path), counts['passed'], counts['known'], counts['failed'],
        counts['skipped'], seconds)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = []
    if '--' in argv:
        i = argv.index('--')
        argv, pytest_args = argv[:i], argv[i + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command')
    p_fetch = sub.add_parser('fetch')
    p_fetch.add_argument('dest')
    p_fetch.add_argument('--release', default='2.3.1', choices=RELEASES)
    p_run = sub.add_parser('run')
    p_run.add_argument('--tests', required=True, help='folder holding Keras\' tests/')
    p_run.add_argument('--python', default=sys.executable)
    p_run.add_argument('--file', action='append', default=[],
                       help='run only this file of the part (repeatable), e.g. '
                            'tests/keras/backend/backend_test.py')
    p_run.add_argument('--backend', required=True)
    p_run.add_argument('--config', required=True,
                       help='configuration name in the known-differences file')
    p_run.add_argument('--release', default='2.3.1', choices=RELEASES,
                       help='the Keras release whose tree --tests holds')
    p_run.add_argument('--part', default='all', choices=['all'] + sorted(PARTS))
    p_run.add_argument('--keras-path', default='')
    p_run.add_argument('--junit', default='')
    p_run.add_argument('--workers', type=int, default=1)
    p_run.add_argument('--timeout', type=int, default=900)
    sub.add_parser('parts')
    p_tally = sub.add_parser('tally', help="one table row per JUnit file of 'run --junit': "
                             'passed / known differences / failed / skipped, and seconds')
    p_tally.add_argument('junit', nargs='+')
    args = parser.parse_args(argv)
    if args.command == 'tally':
        for path in args.junit:
            print(tally(path))
        return 0
    if args.command == 'fetch':
        fetch(args.dest, args.release)
        return 0
    if args.command == 'parts':
        for name, files in sorted(PARTS.items()):
            print('%s:\n  %s' % (name, '\n  '.join(files)))
        return 0
    if args.command == 'run':
        return run(args, pytest_args)
    parser.print_help()
    return 2


if __name__ == '__main__':
    sys.exit(main())
