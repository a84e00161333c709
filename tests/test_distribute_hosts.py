"""The launcher on several hosts: ``-H host1:N1,host2:N2``, ``--network-interface``, ``--ssh``.

There is no second host and no sshd here, so:

* two "hosts" that are both this machine: ``-H <this machine's non-loopback address>:1,
  localhost:1 --network-interface <that address's interface>`` (found in
  /sys/class/net). TensorFlow / JAX: both workers start locally (no ssh), each gets local
  rank 0 of 1 (its host's), the rendezvous (``TF_CONFIG``, the coordinator) is at the
  interface's address (not 127.0.0.1) and the interface reaches them as
  ``KERAS_BACKEND_DISTRIBUTE_INTERFACE``. The MPI engines (PyTensor; CNTK 2.7 and Theano
  1.0.5 on CPython 3.6): ``mpiexec -H`` with the same list, which OpenMPI sees as one
  node (both names are this machine: local ranks 0 and 1 of 2), and
  ``btl_tcp_if_include`` / ``oob_tcp_if_include`` reach the ranks. Both workers end with
  the numpy reference's weights (rtol 1e-5);
* the ssh path (TensorFlow / JAX), which SIMULATES a second host: ``launch_as_two_hosts.py``
  runs the launcher with 127.0.0.1 taken for another host, and ``--ssh`` names
  ``fake_ssh.py``, which stands in for ssh: it records its arguments and runs the remote
  command on this machine in a bare environment (PATH, HOME, HOSTNAME=the host) from
  ``/``. Checked: ssh's command line (``-tt -- HOST``, ``cd <cwd> && exec env ...`` with the
  placement, ``TF_CONFIG`` / coordinator, the forwarded variables), the worker's
  environment, ``--network-interface lo`` reaching it, the training's weights; and a local
  worker that exits stops the ssh-started one (the launcher kills the ssh process group
  and the worker it registered; on a real remote host, ssh -tt's hangup does it);
* ``-H``'s syntax and ``-n`` against it; which names are this machine.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from keras_backend import engines
from keras_backend.distribute import launcher, rendezvous as rv
from conftest import requested_backends
from test_distribute import (REPO, SCRIPTS, _engine_or_skip, _env, _processes_with,  # noqa: F401
                             check_k_sgd_weights, rendezvous_hosts, workdir)

ENGINES = requested_backends()
TIMEOUT = 120
LIMIT = 600


def _real_interface():
    """(name, ipv4) of the first interface in /sys/class/net with a non-loopback IPv4
    address, or None."""
    try:
        names = sorted(os.listdir('/sys/class/net'))
    except OSError:
        return None
    for name in names:
        ip = rv._interface_ipv4(name)
        if ip and not rv.is_loopback(ip) and not ip.startswith('169.254.'):
            return name, ip
    return None


def _run(engine, launcher_args, out, mode='ok', wrapper=None):
    env = _env(engine)
    cmd = [sys.executable] + (wrapper or ['-m', 'keras_backend.distribute']) + \
        list(launcher_args) + ['--backend', engine, '--timeout', str(TIMEOUT),
                               os.path.join(SCRIPTS, 'k_sgd.py'), out, mode]
    start = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=REPO, timeout=LIMIT)
    return proc, time.time() - start


def _read(out, rank, what):
    with open('%s.%d.%s' % (out, rank, what)) as f:
        return f.read()


def _mpi(engine):
    return engines.worker_start(engine) == engines.WORKERS_MPIEXEC


# -- the pure parts ------------------------------------------------------------------------

def test_host_list_syntax():
    assert launcher.parse_hosts('node1:2,node2') == [('node1', 2), ('node2', 1)]
    assert launcher.parse_hosts('[fd00::2]:3,10.0.0.1:1') == [('fd00::2', 3), ('10.0.0.1', 1)]
    for bad in ('a:0', 'a:x', ':2', 'a,,b', 'a:-1'):
        with pytest.raises(ValueError, match='HOST:N'):
            launcher.parse_hosts(bad)
    with pytest.raises(ValueError, match='named twice'):
        launcher.parse_hosts('a:1,a:2')
    script = os.path.join(SCRIPTS, 'k_sgd.py')
    backend = engines.names()[0]
    with pytest.raises(ValueError, match='does not match -H'):
        launcher.launch(3, script, hosts='a:1,b:1', backend=backend)
    with pytest.raises(ValueError, match='-n N'):
        launcher.launch(None, script, backend=backend)
    with pytest.raises(ValueError, match='network-interface'):
        launcher.launch(None, script, hosts='localhost:1,127.0.0.1:1', backend=backend,
                        collectives='engine',
                        network_interface='no-such-if0')


def test_which_names_are_this_machine():
    import socket
    for name in ['localhost', '127.0.0.1', socket.gethostname()] + \
            [ip for _, ip in rv.interfaces()]:
        assert launcher.is_local_host(name), name
    assert not launcher.is_local_host('no-such-host.invalid')
    assert not launcher.is_local_host('192.0.2.254' if rv.host_address(warn=False) !=
                                      '192.0.2.254' else '198.51.100.7')


def test_the_remote_command_keeps_cwd_and_forwards_the_environment():
    env = {'KERAS_BACKEND': 'x', 'KERAS_BACKEND_DISTRIBUTE_RANK': '1', 'PYTHONPATH': '/a b',
           'OMP_NUM_THREADS': '2', 'TF_CONFIG': '{"a": 1}', 'SECRET': 'no', 'PATH': '/p'}
    cmd = launcher.remote_command(env, 's.py', ['x y'], cwd='/w d')
    assert cmd == ("cd '/w d' && exec env KERAS_BACKEND=x KERAS_BACKEND_DISTRIBUTE_RANK=1 "
                   "OMP_NUM_THREADS=2 'PYTHONPATH=/a b' 'TF_CONFIG={\"a\": 1}' %s -m "
                   "keras_backend.distribute._worker s.py 'x y'" % sys.executable)


# -- two hosts that are both this machine ----------------------------------------------------

@pytest.mark.parametrize('engine', ENGINES)
def test_two_local_hosts_and_the_interface(engine, workdir):  # noqa: F811
    _engine_or_skip(engine)
    found = _real_interface()
    if found is None:
        pytest.skip('no network interface with a non-loopback IPv4 address in /sys/class/net')
    iface, ip = found
    out = os.path.join(workdir, 'w')
    proc, took = _run(engine, ['-H', '%s:1,localhost:1' % ip, '--network-interface', iface],
                      out)
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    placed = [json.loads(_read(out, r, 'placement')) for r in (0, 1)]
    assert [(p['rank'], p['size']) for p in placed] == [(0, 2), (1, 2)]
    if _mpi(engine):
        # mpiexec -H: OpenMPI takes both names for this one node
        assert [(p['local_rank'], p['local_size']) for p in placed] == [(0, 2), (1, 2)]
        assert [p['btl_tcp_if_include'] for p in placed] == [iface, iface]
        assert [p['oob_tcp_if_include'] for p in placed] == [iface, iface]
        assert rendezvous_hosts(out) == []
    else:
        assert [(p['local_rank'], p['local_size']) for p in placed] == [(0, 1), (0, 1)]
        assert [p['interface'] for p in placed] == [iface, iface]
        hosts = rendezvous_hosts(out)
        assert hosts and set(hosts) == {ip}, hosts
    print('%s: -H %s:1,localhost:1 --network-interface %s: %.1f s' % (engine, ip, iface, took))


# -- the ssh path, a second host simulated -----------------------------------------------------

def _ssh_args(log):
    ssh = '%s %s %s' % (sys.executable, os.path.join(SCRIPTS, 'fake_ssh.py'), log)
    return ['--ssh', ssh]


@pytest.mark.parametrize('engine', [e for e in ENGINES if not _mpi(e)])
def test_ssh_started_worker(engine, workdir):  # noqa: F811
    """Simulates a second host (127.0.0.1 taken for another host, fake_ssh.py for ssh)."""
    _engine_or_skip(engine)
    out = os.path.join(workdir, 'w')
    log = os.path.join(workdir, 'ssh.log')
    wrapper = [os.path.join(SCRIPTS, 'launch_as_two_hosts.py'), '127.0.0.1']
    proc, took = _run(engine, ['-H', 'localhost:1,127.0.0.1:1', '--network-interface', 'lo']
                      + _ssh_args(log), out, wrapper=wrapper)
    assert proc.returncode == 0, proc.stderr[-5000:]
    check_k_sgd_weights(out)
    with open(log) as f:
        calls = [json.loads(line) for line in f]
    assert len(calls) == 1                       # only worker 1 is on the "other host"
    flag, dashes, host, command = calls[0]
    assert (flag, dashes, host) == ('-tt', '--', '127.0.0.1')
    assert command.startswith('cd %s && exec env ' % REPO)
    assert ' -m keras_backend.distribute._worker %s %s ok' % (
        os.path.join(SCRIPTS, 'k_sgd.py'), out) in command
    for part in ('KERAS_BACKEND_DISTRIBUTE_RANK=1', 'KERAS_BACKEND_DISTRIBUTE_SIZE=2',
                 'KERAS_BACKEND_DISTRIBUTE_LOCAL_RANK=0', 'KERAS_BACKEND_DISTRIBUTE_LOCAL_SIZE=1',
                 'KERAS_BACKEND_DISTRIBUTE_INTERFACE=lo', 'KERAS_BACKEND=%s' % engine,
                 'KERAS_BACKEND_DISTRIBUTE_TIMEOUT=%r' % float(TIMEOUT), 'PYTHONPATH=%s' % REPO):
        assert part in command, (part, command)
    placed = [json.loads(_read(out, r, 'placement')) for r in (0, 1)]
    assert [(p['rank'], p['local_rank'], p['local_size']) for p in placed] == [(0, 0, 1),
                                                                              (1, 0, 1)]
    assert placed[1]['hostname'] == '127.0.0.1' and placed[1]['cwd'] == REPO
    assert [p['interface'] for p in placed] == ['lo', 'lo']
    # the host of -H for the other host; lo's address for this one
    assert set(rendezvous_hosts(out)) == {'127.0.0.1'}
    # a local worker that exits stops the ssh-started one: rank 0 is on the other host now
    out2 = os.path.join(workdir, 'x')
    proc, took2 = _run(engine, ['-H', '127.0.0.1:1,localhost:1'] + _ssh_args(log), out2,
                       mode='exit', wrapper=wrapper)
    # worker 1's status 3: the first to fail (worker 0's WorkerLost follows it)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert 'WorkerLost: worker 1 of 2 exited with status 3; killing the others' in \
        proc.stderr, proc.stderr[-3000:]
    time.sleep(1)
    assert _processes_with(out2) == []
    print('%s: ssh-started worker: %.1f s; stopped with the other: %.1f s'
          % (engine, took, took2))
