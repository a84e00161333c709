"""The stall check: which workers keep the others waiting in a collective.

Horovod's ``HOROVOD_STALL_CHECK_TIME_SECONDS``, ours
``KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS`` (or ``init(stall_check=...)``; default
60 s, 0 disables). When some workers have entered a collective and others have not
reached it for that long, worker 0's stderr gets one line::

    keras_backend.distribute: stall: ranks [1] have not reached allreduce #4 after 2 s (ranks [0] are waiting)

``#4`` is the collective's number, counted from 1 on every worker in the order they
run (the workers run the same collectives in the same order), from the first after
``init``. One line per stalled collective: it is not repeated while the stall lasts
(Horovod repeats its warning every stall time); a later stall at another collective
gets its own line. The check only reports: the collective's ``timeout`` still raises
:class:`~keras_backend.distribute.WorkerLost`.

How worker 0 knows who is missing: a side channel beside the engine's collectives.
Worker 0 starts a monitor process (the standard library only, so that it runs whatever
the engine holds: CNTK's communicator keeps the GIL while it waits) listening on a TCP
port of every interface; ``init`` sends its address to every worker with one broadcast
(rank 0's host as the rendezvous gives it: ``TF_CONFIG``'s worker 0, JAX's coordinator,
the loopback under the launcher, else :func:`~keras_backend.distribute.rendezvous.host_address`).
Every worker, worker 0 too, connects and then, at each collective it enters, sends 9
bytes (the collective's number and kind) on a non-blocking socket: :func:`entered`,
which each engine's collectives module calls where the collective is entered. The
monitor looks every second (or every half stall time, if shorter). A side channel that
fails (no port, no connection) turns the check off with one warning on stderr; it never
changes a result or stops a run.
"""
import os
import socket
import struct
import subprocess
import sys
import threading
import time

#: the environment variable of the stall time in seconds (0 disables the check)
ENV_STALL_CHECK = 'KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS'
DEFAULT_STALL_CHECK = 60.0

#: the collectives' kinds, as the stall line names them (a message carries the index)
KINDS = ('allreduce', 'barrier')

_HELLO = struct.Struct('!I')        # the worker's rank
_MESSAGE = struct.Struct('!QB')     # (the collective's number, its kind)
#: the broadcast of the monitor's address at init: the port, then the host's bytes
_ADDRESS_LENGTH = 256
_PREFIX = 'keras_backend.distribute: '

#: the monitor process: argv = size, stall seconds. It listens on a free TCP port of
#: every interface, writes the port on stdout, then reads every worker's hello and
#: messages; it exits when its stdin (worker 0) closes.
_MONITOR = r'''
import select, socket, struct, sys, time
size, seconds = int(sys.argv[1]), float(sys.argv[2])
KINDS = %(kinds)r
HELLO, MESSAGE = struct.Struct('!I'), struct.Struct('!QB')
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(('', 0))
server.listen(max(size, 8))
sys.stdout.write('%%d\n' %% server.getsockname()[1])
sys.stdout.flush()
buffers, rank_of, count, since, kind_of, reported = {}, {}, {}, {}, {}, set()
tick = min(1.0, seconds / 2.0)
next_check = time.monotonic() + tick
while True:
    wait = max(0.0, next_check - time.monotonic())
    ready = select.select([0, server] + list(buffers), [], [], wait)[0]
    now = time.monotonic()
    for s in ready:
        if s == 0:
            try:
                import os
                if not os.read(0, 4096):
                    sys.exit(0)
            except OSError:
                sys.exit(0)
        elif s is server:
            try:
                conn = server.accept()[0]
                buffers[conn] = b''
            except OSError:
                pass
        else:
            try:
                data = s.recv(65536)
            except OSError:
                data = b''
            if not data:
                del buffers[s]
                s.close()
                continue
            buf = buffers[s] + data
            if s not in rank_of:
                if len(buf) < HELLO.size:
                    buffers[s] = buf
                    continue
                r = HELLO.unpack(buf[:HELLO.size])[0]
                rank_of[s] = r
                count.setdefault(r, 0)
                since.setdefault(r, now)
                buf = buf[HELLO.size:]
            r = rank_of[s]
            n = len(buf) // MESSAGE.size
            for i in range(n):
                k, kind = MESSAGE.unpack_from(buf, i * MESSAGE.size)
                if k > count[r]:
                    count[r], since[r] = k, now
                    kind_of.setdefault(k, kind)
            buffers[s] = buf[n * MESSAGE.size:]
    if now < next_check:
        continue
    next_check = now + tick
    if not count:
        continue
    top = max(count.values())
    behind = sorted(r for r, k in count.items() if k < top)
    if top == 0 or not behind or top in reported:
        continue
    waiting = sorted(r for r, k in count.items() if k == top)
    if now - min(since[r] for r in waiting) < seconds:
        continue
    reported.add(top)
    kind = kind_of.get(top, 0)
    sys.stderr.write('keras_backend.distribute: stall: ranks %%s have not reached %%s #%%d '
                     'after %%g s (ranks %%s are waiting)\n'
                     %% (behind, KINDS[kind] if kind < len(KINDS) else 'collective', top,
                         seconds, waiting))
    sys.stderr.flush()
'''


class _S(object):
    sock = None          # this worker's connection to the monitor (non-blocking)
    pending = b''        # bytes the socket did not take yet
    count = 0            # the collectives entered since init
    monitor = None       # worker 0: the monitor process
    seconds = 0.0
    lock = threading.Lock()


def stall_seconds(value=None, env=None):
    """The stall time in seconds: ``value`` (``init``'s ``stall_check``), else
    ``$KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS``, else 60.

    Args:
        value: None or a number >= 0 (0: no check).
        env: the environment (default ``os.environ``).

    Returns:
        float >= 0.

    Raises:
        TypeError: ``value`` is not a number.
        ValueError: ``value`` (or the variable) is negative or not a number.

    Example:
        >>> stall_seconds(None, {'KERAS_BACKEND_DISTRIBUTE_STALL_CHECK_SECONDS': '2'})
        2.0
        >>> stall_seconds(0)
        0.0
    """
    env = os.environ if env is None else env
    if value is None:
        text = env.get(ENV_STALL_CHECK, '').strip()
        if not text:
            return DEFAULT_STALL_CHECK
        try:
            value = float(text)
        except ValueError:
            raise ValueError('%s must be a number of seconds >= 0, got %r'
                             % (ENV_STALL_CHECK, text))
        if not value >= 0:
            raise ValueError('%s must be a number of seconds >= 0, got %r'
                             % (ENV_STALL_CHECK, text))
        return value
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError('init: stall_check must be a number of seconds, got %r' % (value,))
    if not value >= 0:
        raise ValueError('init: stall_check must be >= 0 seconds (0: no check), got %r'
                         % (value,))
    return float(value)


def _warn(text):
    try:
        sys.stderr.write(_PREFIX + text + '\n')
        sys.stderr.flush()
    except (IOError, OSError, ValueError):
        pass


def rank0_host(place, env=None):
    """The host the other workers reach worker 0 at, as the rendezvous gives it:
    ``TF_CONFIG``'s worker 0, else JAX's coordinator, else the loopback when our
    launcher started the workers (one machine), else :func:`rendezvous.host_address`."""
    import json
    from . import rendezvous
    env = os.environ if env is None else env
    address = ''
    config = env.get('TF_CONFIG', '').strip()
    if config:
        try:
            address = json.loads(config)['cluster']['worker'][0]
        except (ValueError, KeyError, IndexError, TypeError):
            address = ''
    if not address:
        address = env.get('KERAS_BACKEND_DISTRIBUTE_COORDINATOR', '').strip()
    if address:
        host = address.rsplit(':', 1)[0] if address.count(':') == 1 or \
            address.startswith('[') else address
        return host.strip('[]')
    if place.source == rendezvous.LAUNCHER:
        return '127.0.0.1'
    return rendezvous.host_address(env, warn=False)


def _start_monitor(size, seconds):
    """Worker 0: start the monitor; its port, or 0 (with a warning) when it failed."""
    import select
    try:
        proc = subprocess.Popen(
            [sys.executable, '-S', '-E', '-c', _MONITOR % {'kinds': KINDS}, str(size),
             repr(float(seconds))], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except (OSError, ValueError) as e:
        _warn('stall check off: its monitor did not start (%s)' % e)
        return 0
    line = b''
    deadline = time.time() + 30.0
    while not line.endswith(b'\n') and time.time() < deadline:
        if select.select([proc.stdout], [], [], 1.0)[0]:
            got = os.read(proc.stdout.fileno(), 64)
            if not got:
                break
            line += got
    try:
        port = int(line.strip())
    except ValueError:
        port = 0
    if not port:
        _warn('stall check off: its monitor did not report a port')
        try:
            proc.kill()
        except OSError:
            pass
        return 0
    _S.monitor = proc
    return port


def _encode(host, port):
    import numpy as np
    data = np.zeros(_ADDRESS_LENGTH + 1, np.float32)
    raw = host.encode('utf-8')[:_ADDRESS_LENGTH]
    data[0] = port
    data[1:1 + len(raw)] = np.frombuffer(raw, np.uint8)
    return data


def _decode(data):
    port = int(round(float(data[0])))
    raw = bytes(bytearray(int(round(float(b))) for b in data[1:] if 0 < b < 256))
    return raw.decode('utf-8', 'replace'), port


def start(rank, size, seconds, place, allreduce_array):
    """Set up the side channel, on every worker, right after the engine's runtime started.

    Every worker calls it (it holds one broadcast: worker 0's monitor address, or port 0
    when worker 0's check is off, which turns it off everywhere: worker 0's setting
    decides).

    Args:
        rank, size: this worker's place (ints; ``size`` > 1).
        seconds: this worker's stall time (:func:`stall_seconds`; only worker 0's counts).
        place: :func:`rendezvous.placement`'s answer (where worker 0's host comes from).
        allreduce_array: the engine's ``allreduce_array(flat, average, state)``-like
            function of one argument: the sum over the workers of a float32 array.

    Returns:
        True when this worker reports to a monitor, else False. Never raises for a
        failed channel (a warning says the check is off); the broadcast's own errors
        (a lost peer) propagate.
    """
    stop()
    port, host = 0, ''
    if rank == 0 and seconds > 0:
        port = _start_monitor(size, seconds)
        if port:
            try:
                host = rank0_host(place)
            except (ValueError, OSError) as e:
                _warn('stall check off: no address for worker 0 (%s)' % e)
                port = 0
    mine = _encode(host, port) if rank == 0 else _encode('', 0)
    host, port = _decode(allreduce_array(mine))
    if not port:
        stop()
        return False
    target = '127.0.0.1' if rank == 0 else host
    try:
        sock = socket.create_connection((target, port), timeout=30.0)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(_HELLO.pack(rank))
        sock.setblocking(False)
    except (socket.error, OSError) as e:
        _warn('stall check off on rank %d: cannot reach the monitor at %s:%d (%s)'
              % (rank, target, port, e))
        return False
    _S.sock, _S.pending, _S.count = sock, b'', 0
    _S.seconds = seconds
    return True


def entered(kind='allreduce'):
    """Tell worker 0's monitor that this worker enters its next collective.

    Costs a counter increment and a non-blocking send of 9 bytes; does nothing when
    the check is off. Never raises (a broken channel turns the check off, with a
    warning).

    Args:
        kind: one of :data:`KINDS` (the name the stall line gives the collective).

    Example:
        >>> entered('barrier')      # the check is off: nothing happens
    """
    if _S.sock is None:
        return
    with _S.lock:
        sock = _S.sock
        if sock is None:
            return
        _S.count += 1
        try:
            code = KINDS.index(kind)
        except ValueError:
            code = 255
        data = _S.pending + _MESSAGE.pack(_S.count, code)
        try:
            sent = sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except (socket.error, OSError) as e:
            _S.sock = None
            _warn('stall check off: the monitor\'s connection broke (%s)' % e)
            return
        _S.pending = data[sent:]


def stop():
    """Close this worker's channel and stop worker 0's monitor (``shutdown``)."""
    with _S.lock:
        sock, _S.sock, _S.pending, _S.count = _S.sock, None, b'', 0
        proc, _S.monitor = _S.monitor, None
    if sock is not None:
        try:
            sock.close()
        except (socket.error, OSError):
            pass
    if proc is not None:
        try:
            proc.stdin.close()
            proc.stdout.close()
        except (IOError, OSError):
            pass
        try:
            proc.kill()
            proc.wait()
        except OSError:
            pass
