"""The interfaces written once are kept: every collectives module of the engine table
provides :mod:`keras_backend.distribute.collectives`' functions with their parameters.

The modules are read as source (``ast``), so an engine that is not installed here is
checked too; nothing is imported but the engine table.
"""
import ast
import os

import pytest

from keras_backend import engines
from keras_backend.distribute import collectives

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _source_path(module):
    base = os.path.join(REPO, *module.split('.'))
    return base + '.py' if os.path.exists(base + '.py') else os.path.join(base, '__init__.py')


def _functions(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    return dict((node.name, tuple(a.arg for a in node.args.args))
                for node in tree.body if isinstance(node, ast.FunctionDef))


COLLECTIVES = sorted(set(row.collectives for row in engines.TABLE))


@pytest.mark.parametrize('module', COLLECTIVES)
def test_collectives_module_fits_the_interface(module):
    path = _source_path(module)
    assert os.path.exists(path), '%s: no source at %s' % (module, path)
    assert collectives.problems(_functions(path)) == [], module


def test_the_interface_check_can_fail():
    fine = dict((name, params) for name, params, _ in collectives.REQUIRED)
    assert collectives.problems(fine) == []
    lacking = dict(fine)
    del lacking['barrier']
    assert collectives.problems(lacking) == ['barrier is missing']
    wrong = dict(fine, stop=('now',))
    assert collectives.problems(wrong) == ["stop('now',) should take ()"]
