"""Print one line per engine configuration from the JUnit XML files of a CI run.

Usage: python3 .ci/summary.py REPORT_DIR

REPORT_DIR holds ``<config>.xml`` files written by ``pytest --junitxml`` and,
for each, ``<config>.label`` (a line such as ``all=CNTK 2.7 (Python 3.6.15)``).
A run of Keras 2.3.1's own suite on Keras' own backend (the anchor) is labelled
``anchor=...`` and shown on the line of the run whose label names it with
``beside=<config>``; its failures do not fail CI. Expected failures (the
known-differences file) are counted apart.
A run that served several engines (``py3.xml``: TensorFlow, PyTensor, JAX) is
split by the engine named in each test's parameters; tests that take no engine
are counted on an ``engine-neutral`` line. Exit status 1 when a run has
failures or errors or when an expected report is missing.
"""
import importlib.util
import os
import sys
import xml.etree.ElementTree as ET


def _engine_table():
    """keras_backend/engines.py (the engine table), loaded by its path: this script runs
    under the machine's bare python3, which has neither the package installed nor any
    engine, and the table module needs only the standard library."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'keras_backend', 'engines.py')
    spec = importlib.util.spec_from_file_location('_keras_backend_engine_table', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the backend names a test id may carry, from the engine table
ENGINES = _engine_table().names()


def engine_of(name):
    """The engine in a test id such as ``test_x[tensorflow-channels_last]``, or None."""
    if '[' not in name:
        return None
    params = name[name.index('[') + 1:name.rindex(']')].split('-')
    for engine in ENGINES:
        if engine in params:
            return engine
    return None


def outcome(case):
    for tag in ('failure', 'error'):
        if case.find(tag) is not None:
            return 'failed'
    skipped = case.find('skipped')
    if skipped is not None:
        # an expected failure (tests/keras_suite_known_differences.txt)
        return 'known' if skipped.get('type') == 'pytest.xfail' else 'skipped'
    return 'passed'


def _zero():
    return {'passed': 0, 'failed': 0, 'skipped': 0, 'known': 0}


def count(path):
    """{engine or None: {'passed': n, 'failed': n, 'skipped': n, 'known': n}} for one report."""
    counts = {}
    for case in ET.parse(path).getroot().iter('testcase'):
        slot = counts.setdefault(engine_of(case.get('name', '')), _zero())
        slot[outcome(case)] += 1
    return counts


def fmt(c):
    text = '%d passed, %d failed, %d skipped' % (c['passed'], c['failed'], c['skipped'])
    if c.get('known'):
        text += ', %d known differences' % c['known']
    return text


def total(counts):
    out = _zero()
    for c in counts.values():
        for k in out:
            out[k] += c[k]
    return out


def main(folder):
    status = 0
    lines = []
    for name in sorted(os.listdir(folder), key=lambda n: (not n.startswith('py3'), n)):
        if not name.endswith('.label'):
            continue
        config = name[:-len('.label')]
        with open(os.path.join(folder, name)) as f:
            labels = dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)
        xml = os.path.join(folder, config + '.xml')
        if not os.path.exists(xml):
            lines.append('%-40s NO REPORT (the run did not finish)' % labels.get('all', config))
            status = 1
            continue
        counts = count(xml)
        if 'anchor' in labels:  # Keras' own backend: shown beside ours, never fails CI
            continue
        if 'all' in labels:   # one engine: every test of the run counts for it
            ours = total(counts)
            line = '%-40s %s' % (labels['all'], fmt(ours))
            anchor = labels.get('beside')
            if anchor:
                anchor_xml = os.path.join(folder, anchor + '.xml')
                line += '  | Keras\' own backend: %s' % (
                    fmt(total(count(anchor_xml))) if os.path.exists(anchor_xml)
                    else 'NO REPORT')
            lines.append(line)
            status |= ours['failed'] > 0
        else:
            # an engine without a label of its own in this run (a test merely
            # parametrised by engine names) counts with the engine-neutral tests
            merged = {}
            for key, c in counts.items():
                key = key if key in labels else 'neutral'
                slot = merged.setdefault(key, _zero())
                for k in slot:
                    slot[k] += c[k]
            for key, c in sorted(merged.items(), key=lambda kv: kv[0] == 'neutral'):
                lines.append('%-40s %s' % (labels.get(key, 'engine-neutral tests'), fmt(c)))
                status |= c['failed'] > 0
    print('== Summary, per engine configuration')
    for line in lines:
        print(line)
    return int(status)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
