"""The layout of the code: the API in one order, the engines in one table.

* Every adapter lays out the API the same way: one module per section of
  ``api.SECTIONS``, named as the section's module in ``keras_backend/api/``
  (``<engine>_backend/convolution.py`` beside ``api/convolution.py``), gathered by the
  adapter's ``ops``. The test reads the sources without importing any engine (so it
  runs in every interpreter), finds the top-level definition of each public name, and
  checks that it is in its section's module and that each module keeps reference order.
* No module of the package imports one that imports it back, at the top or inside a
  function (an import graph of every module, cycles reported).
* The engines are listed once, in the engine table (``keras_backend/engines.py``):
  no other module of the package, the tests, the tools, CI, the benchmarks or
  ``setup.py`` spells out a list of engines (a scan of their source, with a commented
  allow-list of the per-engine facts, two engines at most, that are not engine lists),
  and no text counts the engines in words.
"""
import ast
import os
import re

import pytest

from keras_backend import api, engines

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.join(REPO, 'keras_backend')
#: the adapter modules (file names without .py), from the engine table
ADAPTERS = tuple(engines.adapter_module(name).rsplit('.', 1)[1] for name in engines.names())


#: the module of each section of the API (``api.SECTIONS``), by file name: an engine package
#: holds its functions of that section in the module of the same name
SECTION_FILES = tuple(m.__name__.rsplit('.', 1)[1] for m in api.SECTION_MODULES)
#: the longest an engine's ``ops`` module or one of its section modules may be
MAX_LINES = 600


def _package(adapter):
    path = os.path.join(ROOT, adapter)
    assert os.path.isfile(os.path.join(path, '__init__.py')), \
        '%s: an adapter is a package (keras_backend/<engine>_backend/)' % adapter
    return path


def _section_source(adapter, section):
    """The source of an adapter's section module (``keras_backend/<adapter>/<section>.py``),
    or None when it has none."""
    path = os.path.join(_package(adapter), section + '.py')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def _module_file(dotted):
    """The source file of the module ``dotted``: ``a/b.py`` or a package's ``a/b/__init__.py``."""
    path = os.path.join(REPO, *dotted.split('.'))
    return path + '.py' if os.path.exists(path + '.py') else os.path.join(path, '__init__.py')


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


@pytest.mark.parametrize('adapter', ADAPTERS)
def test_each_public_function_is_defined_in_its_sections_module(adapter):
    """``keras_backend/<engine>_backend/<section>.py`` beside ``keras_backend/api/<section>.py``:
    each API name is defined (``def``, or an assignment such as ``int_shape = core.int_shape``)
    in the module of its section, and in no other; only the names every adapter takes from
    ``keras_backend.common`` (``api.COMMON_NAMES``) may come from there instead."""
    where = {}
    for section in SECTION_FILES:
        source = _section_source(adapter, section)
        for name in (_definitions(source) if source is not None else ()):
            where.setdefault(name, []).append(section)
    wrong = []
    for (title, names), section in zip(api.SECTIONS, SECTION_FILES):
        for name in names:
            found = where.get(name, [])
            if found != [section] and not (found == [] and name in api.COMMON_NAMES):
                wrong.append('%s: defined in %s, belongs in %s.py (%s)'
                             % (name, found or 'no section module', section, title))
    assert wrong == [], '%s:\n  %s' % (adapter, '\n  '.join(wrong))


@pytest.mark.parametrize('adapter', ADAPTERS)
def test_each_section_module_follows_reference_order(adapter):
    out_of_order = []
    for (_, names), section in zip(api.SECTIONS, SECTION_FILES):
        source = _section_source(adapter, section)
        if source is None:
            continue
        found = _definitions(source)
        defined = [n for n in names if n in found]
        out_of_order += ['%s.py: %s after %s' % (section, a, b)
                         for a, b in zip(defined, defined[1:]) if found[a] > found[b]]
    assert out_of_order == [], (
        '%s: these neighbours (in api.SECTIONS order) are defined in the wrong order: %s'
        % (adapter, out_of_order))


@pytest.mark.parametrize('adapter', ADAPTERS)
def test_ops_and_its_sections_are_short(adapter):
    """The ``ops`` module gathers the section modules (none of them, nor it, over
    :data:`MAX_LINES` lines)."""
    long_files = []
    for name in ('ops',) + SECTION_FILES:
        source = _section_source(adapter, name)
        if source is not None and source.count('\n') > MAX_LINES:
            long_files.append('%s.py: %d lines' % (name, source.count('\n')))
    assert _section_source(adapter, 'ops') is not None, '%s: no ops.py' % adapter
    assert long_files == [], '%s: over %d lines: %s' % (adapter, MAX_LINES, long_files)


# ---------------------------------------------------------------------------
# No import cycle inside the package
# ---------------------------------------------------------------------------

#: packages whose import cycles are let through for now (a cycle all of whose modules lie in
#: one of them), each with its reason; an entry that lets no cycle through fails the test
CYCLES_ALLOWED_IN = {
}


def _package_modules():
    """{dotted module name: (path, is_package)} of every module of ``keras_backend``."""
    modules = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for name in sorted(files):
            if not name.endswith('.py'):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, REPO)[:-3].split(os.sep)
            if parts[-1] == '__init__':
                modules['.'.join(parts[:-1])] = (path, True)
            else:
                modules['.'.join(parts)] = (path, False)
    return modules


def imports_of(source, module, is_package, known):
    """The modules of ``known`` that ``source`` (module ``module``) imports: every
    ``import`` and ``from ... import`` statement, at the top or inside a function, relative
    or absolute. ``from P import n`` imports ``P.n`` when that is a module, else ``P``. The
    packages above an imported module, which Python imports first, are not counted (every
    package would otherwise import itself back through its own modules)."""
    package = module if is_package else module.rpartition('.')[0]
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split('.')
                base = '.'.join(parts[:len(parts) - node.level + 1])
                if node.module:
                    base = base + '.' + node.module
            else:
                base = node.module
            for alias in node.names:
                target = base + '.' + alias.name
                if target in known:
                    out.add(target)
                elif base in known:
                    out.add(base)
    out.discard(module)
    return out


def import_graph():
    """{module: the package modules it imports}, over every module of ``keras_backend``."""
    modules = _package_modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        with open(path, encoding='utf-8') as f:
            graph[name] = imports_of(f.read(), name, is_package, modules)
    return graph


def import_cycles(graph):
    """The import cycles of ``graph``: for each strongly connected component of two or more
    modules, ``(cycle, component)``: one cycle through it (a list of modules, each importing
    the next and the last the first) and the sorted list of all its modules."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(v):   # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for component in components:
        # a shortest path from the component's first module back to itself
        start = component[0]
        paths = {start: [start]}
        queue, cycle = [start], None
        while cycle is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    cycle = paths[v]
                    break
                if w in component and w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
        out.append((cycle, component))
    return sorted(out)


def test_the_cycle_finder_finds_cycles():
    known = {'p', 'p.a', 'p.b', 'p.c', 'p.q', 'p.q.d'}
    assert imports_of('from . import b\ndef f():\n    from .c import x\n', 'p.a', False,
                      known) == {'p.b', 'p.c'}
    assert imports_of('import p.q.d\nfrom ..q import d\nfrom .. import a\n', 'p.q.d', False,
                      known) == {'p.a'}
    assert imports_of('from p.q import d, x\n', 'p.c', False, known) == {'p.q.d', 'p.q'}
    assert imports_of('from . import d\nfrom .d import y\n', 'p.q', True, known) == {'p.q.d'}
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a', 'd'}, 'd': set(), 'e': {'e'}}
    assert import_cycles(graph) == [(['a', 'b', 'c'], ['a', 'b', 'c'])]
    graph = {'a': {'b', 'c'}, 'b': {'a'}, 'c': {'b'}}
    assert import_cycles(graph) == [(['a', 'b'], ['a', 'b', 'c'])]
    assert import_cycles({'a': {'b'}, 'b': set()}) == []


def test_no_import_cycle_in_the_package():
    unexpected, allowed = [], set()
    for cycle, component in import_cycles(import_graph()):
        within = [p for p in CYCLES_ALLOWED_IN
                  if all(m == p or m.startswith(p + '.') for m in component)]
        if within:
            allowed.update(within)
            continue
        text = ' -> '.join(cycle + cycle[:1])
        if len(component) > len(cycle):
            text += ' (one cycle among %s)' % ', '.join(component)
        unexpected.append(text)
    assert unexpected == [], (
        'these modules of keras_backend import each other (at the top or inside a function); '
        'move what both need into a module below them:\n  ' + '\n  '.join(unexpected))
    assert sorted(set(CYCLES_ALLOWED_IN) - allowed) == [], \
        'CYCLES_ALLOWED_IN entries that no longer let a cycle through'



# ---------------------------------------------------------------------------
# One engine table
# ---------------------------------------------------------------------------

#: the folders (and files) whose Python files may not list engines
SCANNED = ('keras_backend', 'tests', 'tools', '.ci', 'benchmarks', 'setup.py')
#: the one module that lists them
TABLE_MODULE = os.path.join('keras_backend', 'engines.py')

#: (file, the engine strings of one literal, space-separated, in source order; dicts: keys,
#: then values):
#: literals that name several engines on purpose, each a per-engine fact or an expectation
#: that is not a list of the engines keras_backend runs on. A new entry needs its reason.
#: the literal of Keras 3's own backend names (which one tf.keras would load), not an engine
#: list of ours: three of them are also names of our table
KERAS3_NAMES = {(os.path.join('keras_backend', 'tensorflow_backend', 'core.py'),
                 'tensorflow jax torch')}

ALLOWED = {
    # Keras 3's backend names (which one tf.keras would load), not ours
    (os.path.join('keras_backend', 'tensorflow_backend', 'core.py'), 'tensorflow jax torch'),
    # expected Keras 2.3.1 behaviour: the engines whose Lambda output shapes it infers
    (os.path.join('tests', 'test_keras2_engine_name.py'), 'tensorflow cntk'),
    # the Theano adapter's two engine modules and the package each wraps
    (os.path.join('tests', 'test_theano_specific.py'), 'theano pytensor'),
    # the engines whose process the memory test can run under RLIMIT_AS (TensorFlow and JAX
    # reserve more address space than the cap at import: their resident peak is checked)
    (os.path.join('tests', 'test_keras2_memory.py'), 'theano cntk'),
    # the same fact for the memory benchmark's processes
    (os.path.join('benchmarks', 'memory_benchmark.py'), 'theano cntk'),
    # the engines that keep compiled code in a cache folder (the first minute's cold cache)
    (os.path.join('benchmarks', 'first_minute.py'), 'theano pytensor'),
    # Keras' own backends that the older releases saved the files of tests/data/keras2_releases on
    (os.path.join('tests', 'test_keras2_releases.py'), 'tensorflow theano'),
}


def _vocabulary():
    """{string: the engine it denotes}: every way the table's rows name an engine (the
    backend name, the adapter's ENGINE, title and package, the adapter and collectives
    modules by their paths and file names)."""
    vocab = {}
    for row in engines.TABLE:
        # the collectives module by its path only: inside an engine package its file name
        # ('collectives') is the same for every engine
        for word in (row.name, row.adapter, row.adapter.rsplit('.', 1)[1], row.collectives):
            vocab.setdefault(word, row.name)
        for word in (row.engine, row.title, row.package):
            vocab.setdefault(word, row.engine)
    return vocab


def _strings(nodes):
    out = []
    for node in nodes:
        if isinstance(node, ast.Str):   # Python < 3.8 (ast.Constant in later ones)
            out.append(node.s)
        elif type(node).__name__ == 'Constant' and isinstance(node.value, str):
            out.append(node.value)
    return out


def _python_files():
    for top in SCANNED:
        if top.endswith('.py'):
            yield top, os.path.join(REPO, top)
            continue
        for folder, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = sorted(d for d in dirs if d != '__pycache__')
            for name in sorted(files):
                if name.endswith('.py'):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, REPO), path


def engine_lists(source, vocab):
    """[(line, engine strings)] of the tuple, list, set and dict literals of ``source`` that
    name two or more different engines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = _strings(node.elts)
        elif isinstance(node, ast.Dict):
            words = _strings(k for k in node.keys if k is not None) + _strings(node.values)
        else:
            continue
        words = tuple(w for w in words if w in vocab)
        if len(set(vocab[w] for w in words)) >= 2:
            found.append((node.lineno, words))
    return found


def test_the_scan_finds_an_engine_list():
    vocab = _vocabulary()
    assert engine_lists("ENGINES = ('tensorflow', 'theano')", vocab) == [
        (1, tuple('tensorflow theano'.split()))]
    assert engine_lists("M = {'keras_backend.cntk_backend': 1, 'jax_backend': 2}", vocab) != []
    assert engine_lists("X = {'PyTensor': 'theano'}", vocab) != []
    # one engine's row, or words that are not engines, are no list of engines
    assert engine_lists("R = ('py3', 'keras_backend.jax_backend', 'jax')", vocab) == []
    assert engine_lists("F = ('tensorflow-cpu', 'numpy')", vocab) == []


def test_nothing_but_the_engine_table_lists_engines():
    vocab = _vocabulary()
    unexpected, used = [], set()
    for rel, path in _python_files():
        if rel == TABLE_MODULE:
            continue
        with open(path) as f:
            source = f.read()
        for line, words in engine_lists(source, vocab):
            key = (rel, ' '.join(words))
            if key in ALLOWED:
                used.add(key)
            else:
                unexpected.append('%s:%d: %s' % (rel, line, ', '.join(words)))
    assert unexpected == [], (
        'these literals list engines; read them from the engine table '
        '(keras_backend/engines.py) instead, or add a per-engine fact to ALLOWED with its '
        'reason:\n  ' + '\n  '.join(unexpected))
    assert sorted(ALLOWED - used) == [], 'ALLOWED entries that no longer occur'
    # a per-engine fact names two engines at most: three or more are an engine list
    assert [key for key in ALLOWED - KERAS3_NAMES
            if len(set(vocab[w] for w in key[1].split())) > 2] == []


#: a count of all the engines in words goes stale when one is added; the two engines of the
#: Theano adapter (PyTensor, Theano 1.0.5) may be counted
COUNTED = re.compile(r'\b(three|four|five|six|seven|[3-9])\s+(engines|backends)\b', re.I)


def test_no_text_counts_the_engines():
    paths = [p for _, p in _python_files()]
    paths += [os.path.join(REPO, n) for n in ('README.md', 'setup.py')]
    for folder, dirs, files in os.walk(os.path.join(REPO, 'docs')):
        paths += [os.path.join(folder, n) for n in files if n.endswith(('.md', '.rst', '.py'))]
    stale = []
    for path in paths:
        with open(path, encoding='utf-8') as f:
            for i, line in enumerate(f, 1):
                if COUNTED.search(line):
                    stale.append('%s:%d: %s' % (os.path.relpath(path, REPO), i, line.strip()))
    assert stale == [], 'say "every engine" or name the table instead:\n' + '\n'.join(stale)


def test_the_table_is_consistent():
    names = engines.names()
    assert names == engines.BUILTIN_BACKEND_NAMES
    for name in names:
        rows = engines.configurations(name)
        # the loader's banner shows the title of the row whose engine is the name itself
        assert [row.engine for row in rows].count(name) == 1, name
        for column in ('adapter', 'collectives', 'workers', 'flips_kernels', 'keras2_known_as'):
            assert len(set(getattr(row, column) for row in rows)) == 1, (name, column)
    for row in engines.TABLE:
        assert row.workers in (engines.WORKERS_TF_CONFIG, engines.WORKERS_COORDINATOR,
                               engines.WORKERS_MPIEXEC)
        for module in (row.adapter, row.collectives):   # a module file or a package
            path = os.path.join(REPO, *module.split('.'))
            assert os.path.exists(path + '.py') or os.path.exists(
                os.path.join(path, '__init__.py')), row
    # configurations of one name do not overlap: the advice picks one per interpreter
    for major_minor in [(3, m) for m in range(5, 15)]:
        for name in names:
            fits = [r for r in engines.configurations(name) if r.runs_on(major_minor)]
            assert len(fits) <= 1, (name, major_minor)


def test_every_pip_extra_of_the_table_is_in_setup_py(monkeypatch):
    """setup.py, run with ``setuptools.setup`` replaced, passes each row's ``extra`` with its
    ``requires``, in table order."""
    import runpy
    import setuptools
    given = {}
    monkeypatch.setattr(setuptools, 'setup', lambda **kwargs: given.update(kwargs))
    runpy.run_path(os.path.join(REPO, 'setup.py'), run_name='__main__')
    extras = given['extras_require']
    for extra in set(row.extra for row in engines.TABLE):
        assert extras.get(extra) == [r for row in engines.TABLE if row.extra == extra
                                     for r in row.requires], extra
    assert all(row.requires for row in engines.TABLE)
