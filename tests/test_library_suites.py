"""tools/library_suites.py: its known-differences file parses for every configuration, and its
tally of a pytest JUnit report counts passed, failed, skipped and expected failures apart."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tools'))

import library_suites  # noqa: E402
from keras_suite_plugin import read_known  # noqa: E402

from keras_backend import engines  # noqa: E402

#: the configurations of the CPython 3.6 environment (no TensorFlow beside them), where
#: Keras' own backends of the same engines are the anchors (configuration '<engine>-keras')
PY36_ONLY = tuple(r.engine for r in engines.TABLE if not r.runs_on((3, 11)))
CONFIGS = tuple(r.engine for r in engines.TABLE) + tuple(e + '-keras' for e in PY36_ONLY)


@pytest.mark.parametrize('config', CONFIGS)
def test_known_differences_parse_and_name_long_trainings_apart(config):
    known = read_known(library_suites.KNOWN, config)
    long_ones = set(t for tests in library_suites.LONG_TRAININGS.values() for t in tests)
    for test, reason in known.items():
        assert test.startswith('tests/') and reason
        assert test not in long_ones
    # the TensorFlow 1 reference of keras-pos-embd: a marker where TensorFlow 2 is installed,
    # the whole file left out where none is
    trig = 'tests/test_trig_pos_embd.py'
    if config.replace('-keras', '') in PY36_ONLY:
        assert trig in known
    else:
        assert trig + '::TestSinCosPosEmbd::test_add' in known and trig not in known


def test_the_tensorflow_1_anchor_has_no_known_difference():
    """Keras 2.3.1 on its own TensorFlow 1.15 backend (configuration 'tensorflow-keras',
    tools/setup_old_keras_anchors.sh) passes every test of the libraries: an entry for it
    would mean a library's test is wrong, not an engine."""
    assert read_known(library_suites.KNOWN, 'tensorflow-keras') == {}


def test_every_library_pinned_once_with_its_long_trainings():
    names = [n for n, _ in library_suites.LIBRARIES]
    assert len(names) == len(set(names))
    assert set(library_suites.LONG_TRAININGS) <= set(names)


def test_tally_counts_each_outcome(tmp_path):
    report = tmp_path / 'r.xml'
    report.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="a" name="ok"/>'
        '<testcase classname="a" name="ok2"/>'
        '<testcase classname="a" name="bad"><failure message="x"/></testcase>'
        '<testcase classname="a" name="err"><error message="y"/></testcase>'
        '<testcase classname="a" name="skip"><skipped type="pytest.skip" message="no"/>'
        '</testcase>'
        '<testcase classname="a" name="known"><skipped type="pytest.xfail" '
        'message="known difference: z"/></testcase>'
        '</testsuite></testsuites>')
    assert library_suites._tally(str(report)) == (2, 2, 1, 1)
