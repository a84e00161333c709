"""The engine table of keras_backend (``keras_backend/engines.py``), for the benchmarks.

Loaded by its file path, as ``.ci/summary.py`` and ``setup.py`` do: a benchmark's processes
import no more of a keras_backend checkout than they mean to (the parent none, a worker the
checkout its ``--repo`` names, or none at all on Keras' own backends), and the table needs
only the standard library (CPython 3.6 too: the CNTK and Theano 1.0.5 benchmarks run there).
"""
import importlib.util
import os


def _load():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'keras_backend', 'engines.py')
    spec = importlib.util.spec_from_file_location('_keras_backend_engine_table', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the module keras_backend/engines.py (``engines.TABLE``, ``engines.configurations``, ...)
engines = _load()
