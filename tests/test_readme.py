"""The README's Python snippets run as written, on every engine importable here."""
import ast
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def python_snippets():
    with open(os.path.join(REPO, 'README.md')) as f:
        text = f.read()
    return re.findall(r'```python\n(.*?)```', text, flags=re.S)


def test_readme_has_snippets():
    assert len(python_snippets()) >= 1


@pytest.mark.parametrize('index', range(len(python_snippets())))
def test_readme_snippet_runs(K, index, tmp_path):
    code = python_snippets()[index]
    path = [REPO] + ([os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])
    backend = K.backend()
    if re.search(r'^import keras$', code, flags=re.M):
        # a Keras 2.3.1 snippet: Keras loads our adapter as its external backend
        keras2 = os.environ.get('KERAS_BACKEND_KERAS2_PATH') or os.path.join(REPO, '.venv',
                                                                             'keras2')
        if os.path.isdir(keras2):
            path.insert(0, keras2)
        backend = 'keras_backend.%s_backend' % backend
    env = dict(os.environ, KERAS_HOME=str(tmp_path), KERAS_BACKEND=backend,
               KERAS_BACKEND_QUIET='1', PYTHONPATH=os.pathsep.join(path))
    proc = subprocess.run([sys.executable, '-c', code], cwd=str(tmp_path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0 and "No module named 'keras'" in proc.stderr:
        pytest.skip('Keras 2.3.1 is not installed for %s (see README)' % sys.executable)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if index == 0:
        # the opening example prints three losses of one training step each
        losses = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
        assert len(losses) == 3 and losses[0] > losses[1] > losses[2] > 0
