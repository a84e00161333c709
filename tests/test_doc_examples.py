"""Every API docstring's Example runs, and prints the same values, on every engine.

The docstrings live once, in ``keras_backend.api`` (each beside its name's rules); ``doc_examples``
runs a name's examples as a doctest with ``K`` (this engine's adapter) and
``np`` in scope (see its module docstring for how outputs are compared).
"""
import pytest

from keras_backend import api
import doc_examples

NAMES = list(api.API_NAMES) + list(api.LEGACY_NAMES)

#: setters and context managers: they return nothing a user reads
NO_RESULT = ('set_epsilon', 'set_floatx', 'set_image_data_format', 'set_image_dim_ordering',
             'reset_uids', 'clear_session', 'set_session', 'manual_variable_initialization',
             'set_learning_phase', 'learning_phase_scope', 'name_scope', 'set_value',
             'batch_set_value')


def test_every_name_has_one_docstring_with_the_sections():
    missing = [n for n in NAMES if n not in api.DOCS]
    assert missing == [], 'no docstring in api.DOCS for %s' % missing
    extra = sorted(set(api.DOCS) - set(NAMES))
    assert extra == [], 'api.DOCS documents names outside the API: %s' % extra
    lacking = [n for n in NAMES if ('Returns:' not in api.DOCS[n] and n not in NO_RESULT)
               or 'Example:' not in api.DOCS[n]]
    assert lacking == [], 'docstrings without a Returns: or Example: section: %s' % lacking
    # written flush left: ``api.documented`` strips them instead of ``inspect.cleandoc``
    import inspect
    indented = [n for n in NAMES if inspect.cleandoc(api.DOCS[n]) != api.DOCS[n].strip()]
    assert indented == [], 'docstrings not flush left: %s' % indented


@pytest.mark.parametrize('name', NAMES)
def test_doc_example_runs(K, name):
    doc = api.DOCS.get(name)
    if doc is None:
        pytest.fail('no docstring for %s in keras_backend.api' % name)
    n, report = doc_examples.run_examples(K, name, doc)
    assert n > 0, '%s: the docstring has no example' % name
    assert not report, report


def test_adapter_functions_carry_the_shared_docstring(K):
    import inspect
    for name in NAMES:
        doc = inspect.getdoc(getattr(K, name))
        shared = inspect.cleandoc(api.DOCS[name])
        assert doc.startswith(shared), '%s: the docstring is not the shared one' % name
