"""Sphinx configuration of the keras_backend API reference.

Build (from the repository root):  python -m sphinx -W -b html docs/reference docs/_build/html

Each section of ``keras_backend.api.SECTIONS`` becomes one page, its functions
in reference order, documented by autodoc (napoleon reads the Google-style
sections) from the one docstring each name has in ``keras_backend.api`` (written
beside its argument rules, one module per section).
The functions are those of the engine the build imports (TensorFlow unless
``KERAS_BACKEND`` says otherwise), so each page also shows that engine's notes.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
os.environ.setdefault('KERAS_BACKEND', 'tensorflow')
os.environ.setdefault('KERAS_BACKEND_QUIET', '1')

from keras_backend import __version__, api  # noqa: E402

project = 'keras_backend'
author = 'keras_backend developers'
copyright = '2026, keras_backend developers'
release = version = __version__
extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
autodoc_default_options = {}
exclude_patterns = ['_build']
html_theme = 'alabaster'
html_static_path = []
master_doc = 'index'


def _slug(title):
    return re.sub(r'[^a-z0-9]+', '_', title.lower()).strip('_')


def _write_if_changed(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, 'w') as f:
        f.write(text)


def _generate_pages():
    """One page per section (``api/<slug>.rst``) and the legacy aliases' page."""
    out = os.path.join(HERE, 'api')
    if not os.path.isdir(out):
        os.makedirs(out)
    pages = list(api.SECTIONS) + [('Keras 1 aliases', api.LEGACY_NAMES)]
    for title, names in pages:
        lines = [title, '=' * len(title), '']
        if title == 'Keras 1 aliases':
            lines += ['Names of the Keras 1 backend, kept for old code. Each warns',
                      '``DeprecationWarning`` and calls its Keras 2 replacement.', '']
        lines += ['.. currentmodule:: keras_backend.backend', '']
        for name in names:
            lines += ['.. autofunction:: %s' % name, '']
        _write_if_changed(os.path.join(out, _slug(title) + '.rst'), '\n'.join(lines))
    toc = '\n'.join('   api/%s' % _slug(t) for t, _ in pages)
    with open(os.path.join(HERE, 'index.rst.in')) as f:
        template = f.read()
    _write_if_changed(os.path.join(HERE, 'index.rst'), template.replace('@TOC@', toc))


_generate_pages()
