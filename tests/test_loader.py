"""The loader: keras.json, KERAS_HOME, KERAS_BACKEND, custom backends, errors.

Each test that imports ``keras_backend.backend`` runs a fresh interpreter (the
loader acts once per process) with a temporary ``KERAS_HOME``; the tests that
need a working engine use the first one importable in this interpreter.
"""
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile

import pytest

from keras_backend import common, config_file, engines
from conftest import load_adapter, requested_backends

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _available_backend():
    for name in requested_backends():
        if load_adapter(name)[0] is not None:
            return name
    return None


@pytest.fixture
def avail():
    name = _available_backend()
    if name is None:
        pytest.skip('no backend is importable in this interpreter: %s' % '; '.join(
            '%s: %s' % (n, load_adapter(n)[1]) for n in requested_backends()))
    return name


@pytest.fixture
def home(tmp_path):
    return str(tmp_path / 'kh')


def run_python(code, home, env_extra=None, cwd=None):
    env = dict(os.environ)
    for key in ('KERAS_BACKEND', 'KERAS_BACKEND_QUIET'):
        env.pop(key, None)
    env['KERAS_HOME'] = home
    env['PYTHONPATH'] = os.pathsep.join([REPO] + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else []))
    env.update(env_extra or {})
    proc = subprocess.Popen([sys.executable, '-c', code], env=env, cwd=cwd or REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out.decode(), err.decode()


def write_config(home, content):
    os.makedirs(home, exist_ok=True)
    path = os.path.join(home, 'keras.json')
    with open(path, 'w') as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


SHOW = ('from keras_backend import backend as K; '
        'print(K.backend(), K.floatx(), K.epsilon(), K.image_data_format())')


def test_missing_config_is_written_with_defaults(avail, home):
    rc, out, err = run_python(SHOW + '; print(callable(K.lesser), callable(K.deconv2d))',
                              home, {'KERAS_BACKEND': avail})
    assert rc == 0, err
    assert out.split('\n')[0].split() == [avail, 'float32', '1e-07', 'channels_last']
    assert out.split('\n')[1] == 'True True'
    with open(os.path.join(home, 'keras.json')) as f:
        assert json.load(f) == config_file.DEFAULTS
    assert [n for n in os.listdir(home)] == ['keras.json']  # no temp file left behind
    assert err.count('Using %s backend.' % engines.title(avail)) == 1


def test_quiet_env_silences_the_banner(avail, home):
    rc, out, err = run_python(SHOW, home, {'KERAS_BACKEND': avail, 'KERAS_BACKEND_QUIET': '1'})
    assert rc == 0, err
    assert 'backend.' not in err


def test_file_settings_apply_and_file_is_kept(avail, home):
    content = json.dumps({'backend': avail, 'floatx': 'float64', 'epsilon': 1e-5,
                          'image_data_format': 'channels_first', 'extra': 1}, indent=2)
    path = write_config(home, content)
    rc, out, err = run_python(SHOW, home)
    assert rc == 0, err
    assert out.split() == [avail, 'float64', '1e-05', 'channels_first']
    with open(path) as f:
        assert f.read() == content


def test_env_overrides_file_and_empty_env_is_ignored(avail, home):
    write_config(home, {'backend': 'no_such_backend_module'})
    rc, out, err = run_python(SHOW, home, {'KERAS_BACKEND': avail})
    assert rc == 0, err
    assert out.split()[0] == avail
    write_config(home, {'backend': avail})
    rc, out, err = run_python(SHOW, home, {'KERAS_BACKEND': ''})
    assert rc == 0, err
    assert out.split()[0] == avail


def test_invalid_json_is_reported_and_never_rewritten(home):
    path = write_config(home, '{"backend": "tensorflow",, }')
    rc, out, err = run_python('from keras_backend import backend', home)
    assert rc != 0
    assert 'ConfigError' in err and path in err and 'not valid JSON' in err
    # one clear error: no chained JSONDecodeError traceback before it
    assert err.count('Traceback') == 1 and 'JSONDecodeError' not in err
    with open(path) as f:
        assert f.read() == '{"backend": "tensorflow",, }'


def test_keras_backend_module_path_means_that_engine(avail, home):
    # Keras 2.3.1 is pointed at an adapter by its import path; our own loader
    # reads the same variable and must load that engine (no loop, no error).
    rc, out, err = run_python(SHOW, home, {'KERAS_BACKEND': 'keras_backend.%s_backend' % avail})
    assert rc == 0, err
    assert out.split()[0] == avail
    assert engines.canonical_backend('keras_backend.cntk_backend') == 'cntk'
    assert engines.canonical_backend('my.module') == 'my.module'


@pytest.mark.parametrize('key,value,expected', [
    ('floatx', 'float8', "'float16', 'float32', 'float64'"),
    ('floatx', 32, "'float16', 'float32', 'float64'"),
    ('epsilon', 'small', 'a positive number'),
    ('epsilon', -1, 'a positive number'),
    ('epsilon', True, 'a positive number'),
    ('image_data_format', 'channels_middle', "'channels_first', 'channels_last'"),
    ('backend', 3, 'a non-empty string'),
    ('backend', '', 'a non-empty string'),
])
def test_wrong_values_name_file_key_and_expectation(home, key, value, expected):
    path = write_config(home, {key: value})
    with pytest.raises(config_file.ConfigError) as info:
        config_file.read_config(path)
    message = str(info.value)
    assert path in message and repr(key) in message and expected in message


def test_non_object_json_is_rejected(home):
    path = write_config(home, '[1, 2]')
    with pytest.raises(config_file.ConfigError, match='expected a JSON object'):
        config_file.read_config(path)


def test_config_error_stops_the_loader_before_any_engine(home):
    path = write_config(home, {'floatx': 'float8'})
    rc, out, err = run_python('from keras_backend import backend', home,
                              {'KERAS_BACKEND': 'tensorflow'})
    assert rc != 0 and path in err and "'floatx'" in err
    assert 'Using' not in err


def _race(path, barrier, results):
    barrier.wait()
    results.put(config_file.write_default_config(path))


def test_concurrent_first_start_writes_one_file(tmp_path):
    path = str(tmp_path / 'race' / 'keras.json')
    ctx = multiprocessing.get_context('fork') if hasattr(os, 'fork') else multiprocessing
    barrier, results = ctx.Barrier(6), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(path, barrier, results)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    created = [results.get(timeout=10) for _ in procs]
    assert created.count(True) == 1
    with open(path) as f:
        assert json.load(f) == config_file.DEFAULTS
    assert os.listdir(os.path.dirname(path)) == ['keras.json']


def test_existing_file_is_never_overwritten_by_the_default_writer(home):
    path = write_config(home, '{"floatx": "float64"}')
    assert config_file.write_default_config(path) is False
    with open(path) as f:
        assert f.read() == '{"floatx": "float64"}'


def test_config_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv('KERAS_HOME', str(tmp_path / 'kh'))
    assert config_file.config_dir() == str(tmp_path / 'kh')
    monkeypatch.delenv('KERAS_HOME')
    monkeypatch.setenv('HOME', str(tmp_path))
    assert config_file.config_dir() == os.path.join(str(tmp_path), '.keras')
    # A home that does not exist (so is not writable): the per-user temp folder.
    monkeypatch.setenv('HOME', str(tmp_path / 'missing' / 'home'))
    got = config_file.config_dir()
    assert os.path.dirname(got) == tempfile.gettempdir()
    assert os.path.basename(got).startswith('keras-')


def test_custom_backend_module(avail, home, tmp_path):
    mod_dir = tmp_path / 'mods'
    mod_dir.mkdir()
    (mod_dir / 'my_backend.py').write_text(
        'from keras_backend.%s_backend import *\n'
        'def backend():\n    return "my_backend"\n' % avail)
    code = ('from keras_backend import backend as K; import numpy as np; '
            'print(K.backend(), float(K.eval(K.sum(K.variable(np.ones(3))))))')
    rc, out, err = run_python(code, home, {'KERAS_BACKEND': 'my_backend',
                                           'PYTHONPATH': os.pathsep.join([REPO, str(mod_dir)])})
    assert rc == 0, err
    assert out.split() == ['my_backend', '3.0']
    assert 'Using my_backend backend.' in err


def test_custom_backend_missing_names_are_listed(home, tmp_path):
    mod_dir = tmp_path / 'mods'
    mod_dir.mkdir()
    (mod_dir / 'tiny_backend.py').write_text('def placeholder(*a, **k):\n    return None\n')
    rc, out, err = run_python('from keras_backend import backend', home,
                              {'KERAS_BACKEND': 'tiny_backend',
                               'PYTHONPATH': os.pathsep.join([REPO, str(mod_dir)])})
    assert rc != 0
    last = err.strip().splitlines()[-1]
    assert last.startswith('ValueError') and "'tiny_backend'" in last
    listed = set(last.split(': ', 2)[-1].split(', '))
    assert {'variable', 'function', 'conv2d', 'ctc_decode'} <= listed
    assert 'placeholder' not in listed and 'epsilon' not in listed


def test_engine_that_cannot_import_names_engine_extra_and_cause(home):
    missing = [n for n in engines.names() if load_adapter(n)[0] is None]
    if not missing:
        pytest.skip('every engine imports in this interpreter')
    name = missing[0]
    rc, out, err = run_python('from keras_backend import backend', home, {'KERAS_BACKEND': name})
    assert rc != 0
    last = err.strip().splitlines()[-1]
    assert last.startswith('ImportError')
    assert engines.title(name) in last
    # the advice names this interpreter and a command that works on it
    assert sys.executable in last
    assert ('-m pip install "keras_backend[' in last or 'tools/setup_cntk_env.sh' in last
            or 'use a Python' in last or 'use an interpreter' in last)


@pytest.mark.parametrize('engine', engines.names())
def test_install_advice_fits_the_interpreter(engine):
    advice = engines.engine_install_advice(engine)
    assert sys.executable in advice
    py = sys.version_info[:2]
    if engine == 'cntk' and py > (3, 6):
        assert 'tools/setup_cntk_env.sh' in advice and 'pip install' not in advice
    if engine == 'tensorflow' and py < (3, 9):
        assert 'no wheels' in advice and sys.executable + ' -m pip' not in advice
    if engine == 'theano' and py >= (3, 10):
        assert sys.executable + ' -m pip install "keras_backend[theano]"' in advice
    if engine == 'jax':
        if py >= (3, 11):
            assert sys.executable + ' -m pip install "keras_backend[jax]"' in advice
        else:
            assert 'JAX needs Python 3.11+' in advice and sys.executable + ' -m pip' not in advice


@pytest.mark.parametrize('version', [(3, 6), (3, 10)])
def test_jax_advice_names_python_311_below_it(version, monkeypatch):
    # JAX installs on Python 3.11+ only: below it, pip install "keras_backend[jax]" would
    # install nothing, so the advice names this interpreter and one that works.
    monkeypatch.setattr(sys, 'version_info', version + (0, 'final', 0))
    advice = engines.engine_install_advice('jax')
    here = 'Python %d.%d (%s)' % (version[0], version[1], sys.executable)
    assert advice == ('JAX needs Python 3.11+; this is %s. Install it for a Python 3.11+ '
                      'interpreter with: python3.11 -m pip install "keras_backend[jax]"' % here)
    assert engines.install_advice('jax', version, '/x/python') == advice.replace(
        sys.executable, '/x/python')


def test_jax_advice_on_python_311_is_the_pip_command():
    assert engines.install_advice('jax', (3, 11), '/x/python') == (
        'Install it for Python 3.11 (/x/python) with: '
        '/x/python -m pip install "keras_backend[jax]"')
    assert engines.install_advice('jax', (3, 13), 'py').endswith(
        'py -m pip install "keras_backend[jax]"')


def test_jax_import_error_carries_the_jax_advice(monkeypatch):
    monkeypatch.setattr(sys, 'version_info', (3, 10, 0, 'final', 0))
    error = engines.engine_import_error('JAX', 'jax', 'jax', ImportError('No module named jax'))
    assert str(error).startswith("The JAX backend needs the 'jax' package, which could not be "
                                 "imported (ImportError: No module named jax). JAX needs "
                                 "Python 3.11+; this is Python 3.10 (")


def test_theano_advice_between_its_two_configurations():
    # Python 3.8 and 3.9: neither PyTensor (3.10+) nor Theano 1.0.5 (< 3.8) installs
    assert engines.install_advice('theano', (3, 9), 'py') == (
        'neither PyTensor (Python 3.10+) nor Theano 1.0.5 (Python < 3.8) installs on '
        'Python 3.9 (py); use an interpreter in one of those ranges')
    assert 'Install Theano 1.0.5 for' in engines.install_advice('theano', (3, 6), 'py')
    assert engines.install_advice('no_such_engine', (3, 11), 'py') == ''


def test_diagnostics_command(avail, home):
    write_config(home, {'floatx': 'float64'})
    env = dict(os.environ, KERAS_HOME=home, KERAS_BACKEND=avail,
               PYTHONPATH=os.pathsep.join([REPO, os.environ.get('PYTHONPATH', '')]))
    out = subprocess.check_output([sys.executable, '-m', 'keras_backend'], env=env,
                                  cwd=REPO).decode()
    assert 'keras_backend ' in out
    assert os.path.join(home, 'keras.json') + ' (exists)' in out
    lines = {l.split()[0]: l for l in out.splitlines() if l.startswith('  ')}
    assert avail in lines['backend'] and '(env KERAS_BACKEND)' in lines['backend']
    assert 'float64' in lines['floatx'] and '(file)' in lines['floatx']
    assert '(default)' in lines['epsilon'] and '(default)' in lines['image_data_format']
    for name in engines.names():
        assert lines[name].split()[1] in ('ok:', 'not', 'broken:')
    assert lines[avail].split()[1] == 'ok:'


def test_diagnostics_reports_a_broken_config(home):
    path = write_config(home, '{oops')
    env = dict(os.environ, KERAS_HOME=home,
               PYTHONPATH=os.pathsep.join([REPO, os.environ.get('PYTHONPATH', '')]))
    proc = subprocess.Popen([sys.executable, '-m', 'keras_backend'], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1
    assert 'cannot be used' in out.decode() and path in out.decode()
    with open(path) as f:
        assert f.read() == '{oops'


@pytest.mark.parametrize('setter,bad', [
    ('set_floatx', 'float8'), ('set_epsilon', 0), ('set_epsilon', 'x'),
    ('set_image_data_format', 'channels_middle'), ('set_image_dim_ordering', 'xx'),
])
def test_setters_reject_bad_values(setter, bad):
    before = (common.floatx(), common.epsilon(), common.image_data_format())
    with pytest.raises(ValueError) as info:
        getattr(common, setter)(bad)
    assert repr(bad) in str(info.value)
    assert (common.floatx(), common.epsilon(), common.image_data_format()) == before


def test_config_functions():
    common.set_epsilon(1e-5)
    assert common.epsilon() == 1e-5
    common.set_floatx('float16')
    assert common.cast_to_floatx([1, 2]).dtype.name == 'float16'
    common.set_image_dim_ordering('th')
    assert common.image_data_format() == 'channels_first' and common.image_dim_ordering() == 'th'
    assert common.normalize_data_format(None) == 'channels_first'
    assert common.normalize_data_format('Channels_Last') == 'channels_last'
    with pytest.raises(ValueError):
        common.normalize_data_format('nchw')
    common.reset_uids()
    assert [common.get_uid('a'), common.get_uid('a'), common.get_uid('b')] == [1, 2, 1]


def test_every_getter_reads_the_shared_state():
    """After share_state_with (Keras loaded us), every getter reads Keras' values."""
    import types
    theirs = types.ModuleType('keras_common_stand_in')
    theirs._FLOATX, theirs._EPSILON, theirs._IMAGE_DATA_FORMAT = 'float64', 1e-3, 'channels_first'
    before = common._STATE
    try:
        common.share_state_with(theirs)
        assert (common.floatx(), common.epsilon()) == ('float64', 1e-3)
        assert (common.image_data_format(), common.image_dim_ordering()) == ('channels_first', 'th')
        assert common.normalize_data_format(None) == 'channels_first'
        common.set_image_dim_ordering('tf')
        assert theirs._IMAGE_DATA_FORMAT == 'channels_last'
        assert common.image_dim_ordering() == 'tf'
    finally:
        common._STATE = before


def test_diagnostics_never_blames_an_engine_nor_writes_the_file(avail, home):
    # A keras.json that TensorFlow's bundled Keras would refuse too.
    path = write_config(home, {'floatx': 'float31'})
    env = dict(os.environ, KERAS_HOME=home, KERAS_BACKEND='mxnet',
               PYTHONPATH=os.pathsep.join([REPO, os.environ.get('PYTHONPATH', '')]))
    proc = subprocess.run([sys.executable, '-m', 'keras_backend'], env=env, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 1
    assert "'float31'" in proc.stdout
    assert 'broken' not in proc.stdout
    assert ' %s ' % avail in proc.stdout and 'ok: ' in proc.stdout
    os.remove(path)
    proc = subprocess.run([sys.executable, '-m', 'keras_backend'], env=env, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    assert proc.returncode == 0
    assert "warning: backend 'mxnet'" in proc.stdout
    assert 'missing' in proc.stdout
    assert not os.path.exists(path), 'probing the engines wrote keras.json'


def _jax_or_skip():
    if 'jax' not in requested_backends():
        pytest.skip('KERAS_BACKEND_TESTS excludes jax')
    module, reason = load_adapter('jax')
    if module is None:
        pytest.skip('jax backend not importable here: %s' % reason)


def test_jax_keeps_compiled_programs_in_the_keras_folder(home):
    """The JAX adapter points XLA's persistent compilation cache at <keras folder>/jax-cache
    (programs compiled there are loaded by the next process), leaves a folder the user chose,
    and keeps none with KERAS_BACKEND_JAX_CACHE=0."""
    _jax_or_skip()
    code = ('import numpy as np; from keras_backend import jax_backend as K; import jax; '
            'x = K.placeholder(shape=(None, 3)); f = K.function([x], [K.sum(x * 2., axis=1)]); '
            'print(f([np.ones((2, 3), "float32")])[0].tolist()); '
            'print(jax.config.jax_compilation_cache_dir)')
    # every program cached (JAX's threshold is a second of compile time)
    quick = {'JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS': '0'}
    rc, out, err = run_python(code, home, quick)
    assert rc == 0, err
    lines = out.split('\n')
    assert lines[0] == '[6.0, 6.0]'
    folder = os.path.join(home, 'jax-cache')
    assert lines[1] == folder
    assert os.listdir(folder), 'nothing written to %s' % folder
    mine = os.path.join(os.path.dirname(home), 'mine')
    rc, out, err = run_python(code, home, dict(quick, JAX_COMPILATION_CACHE_DIR=mine))
    assert rc == 0, err
    assert out.split('\n')[1] == mine
    rc, out, err = run_python(code, home + '2', dict(quick, KERAS_BACKEND_JAX_CACHE='0'))
    assert rc == 0, err
    assert out.split('\n')[1] == 'None'
    assert not os.path.exists(os.path.join(home + '2', 'jax-cache'))
