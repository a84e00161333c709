"""Every adapter lays out the API the same way: the order of ``api.SECTIONS``.

The test reads each adapter's source without importing its engine (so it
runs in every interpreter), finds the top-level definition of each public
name, and checks that they come in reference order, each under its section's
banner comment, after the engine plumbing.
"""
import ast
import os

import pytest

from keras_backend import api

ADAPTERS = ('tensorflow_backend', 'theano_backend', 'cntk_backend', 'jax_backend')
ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'keras_backend')


def _source(adapter):
    with open(os.path.join(ROOT, adapter + '.py')) as f:
        return f.read()


def _definitions(source):
    """{name: line} of the module-level defs and assignments of API names."""
    found = {}
    for node in ast.parse(source).body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        for name in names:
            if name in api.API_NAMES and name not in found:
                found[name] = node.lineno
    return found


def _banners(source):
    """[(line, title)] of the section banners ``# <title>`` framed by ``# ----`` lines."""
    lines = source.split('\n')
    out = []
    for i in range(1, len(lines) - 1):
        if lines[i - 1].startswith('# ---') and lines[i + 1].startswith('# ---'):
            out.append((i + 1, lines[i][1:].strip()))
    return out


@pytest.mark.parametrize('adapter', ADAPTERS)
def test_public_functions_follow_reference_order(adapter):
    found = _definitions(_source(adapter))
    defined = [n for n in api.API_NAMES if n in found]
    out_of_order = [(a, b) for a, b in zip(defined, defined[1:]) if found[a] > found[b]]
    assert out_of_order == [], (
        '%s: these neighbours (in api.SECTIONS order) are defined in the wrong order: %s'
        % (adapter, out_of_order))


@pytest.mark.parametrize('adapter', ADAPTERS)
def test_each_section_has_its_banner_in_order(adapter):
    source = _source(adapter)
    found = _definitions(source)
    banners = _banners(source)
    titles = [t for _, t in banners]
    for title, names in api.SECTIONS:
        assert title in titles, '%s: no "# %s" section banner' % (adapter, title)
        start = [line for line, t in banners if t == title][0]
        after = [line for line, t in banners if line > start]
        end = after[0] if after else float('inf')
        misplaced = [n for n in names if n in found and not start < found[n] < end]
        assert misplaced == [], '%s: %s defined outside section %r' % (adapter, misplaced, title)
    order = [t for t in titles if t in dict(api.SECTIONS)]
    assert order == [t for t, _ in api.SECTIONS], '%s: sections in order %s' % (adapter, order)
