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
port of worker 0's address only, as the rendezvous gives it (``TF_CONFIG``'s worker 0,
JAX's coordinator, the loopback under the launcher on one host, else
:func:`~keras_backend.distribute.rendezvous.host_address`; a host name that does not
resolve here to an address of this host: every interface,
:func:`~keras_backend.distribute.rendezvous.listen_address`). ``init`` sends its address
and the job's secret to every worker with one broadcast over the engine's collectives
(the secret: ``$KERAS_BACKEND_DISTRIBUTE_SECRET``, which our launcher draws for each
launch, else 32 random bytes worker 0 draws). Every worker, worker 0 too, connects and
presents the secret and its rank; the monitor compares the secret in constant time
(``hmac.compare_digest``) and drops, without a word, a connection that presents another
one, none within 10 s, or a rank outside the job; at most 256 connections wait to
present it (a flood closes the oldest of them first; at most 16 are taken per look, after
what the others sent has been read), and the monitor waits on them with ``selectors``
(epoll: no limit on descriptor numbers). Nothing that does not hold the
secret is counted: a packet from outside the job neither writes a stall line nor hides
one. Then, at each collective it enters, each worker sends 9 bytes (the collective's
number and kind) on its non-blocking connection: :func:`entered`, which each engine's
collectives module calls where the collective is entered. The monitor looks every second
(or every half stall time, if shorter); once every worker is admitted it reads their
messages in batches (a sleep of at most 50 ms between reads) instead of waking at each
one: a wake per collective took a core from the workers (0.12 ms of a 2,730-value MPI
allreduce at 2 workers on 2 cores). A side channel that fails (no port, no
connection) turns the check off with one warning on stderr; it never changes a result or
stops a run.
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

_HELLO = struct.Struct('!I')        # the worker's rank, after the job's secret
_MESSAGE = struct.Struct('!QB')     # (the collective's number, its kind)
#: the broadcast of the monitor's address at init: the port, the host's bytes, the secret's
_ADDRESS_LENGTH = 256
_SECRET_LENGTH = 64
_PREFIX = 'keras_backend.distribute: '
#: connections that have not presented the secret yet: at most this many (the oldest
#: goes first), each for at most this many seconds; at most _ACCEPTS taken per look, after
#: reading what the others sent (a worker's hello is read before 16 looks have passed)
_STRANGERS, _ADMIT_SECONDS, _ACCEPTS = 256, 10.0, 16

#: the monitor process: argv = size, stall seconds, the address to bind ('' every
#: interface), the kinds (comma-separated); the secret in $KERAS_BACKEND_DISTRIBUTE_SECRET.
#: It writes its port on stdout (or '0 why'), admits the workers that present the secret,
#: reads their messages; it exits when its stdin (worker 0) closes.
_MONITOR = r"""
import collections, hmac, os, selectors, socket, struct, sys, time
size, seconds, bind = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
KINDS = sys.argv[4].split(',')
STRANGERS, ADMIT, ACCEPTS = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
secret = os.environ.get('KERAS_BACKEND_DISTRIBUTE_SECRET', '').encode('ascii')
HELLO, MESSAGE = struct.Struct('!I'), struct.Struct('!QB')
try:
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = size + STRANGERS + 64
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY
                                                    else min(want, hard), hard))
except (ImportError, ValueError, OSError):
    pass
try:
    if len(secret) < 16:
        raise ValueError('no secret')
    server = socket.socket(socket.AF_INET6 if ':' in bind else socket.AF_INET,
                           socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((bind, 0))
    server.listen(max(size, 64))
    server.setblocking(False)
except (OSError, ValueError) as e:
    sys.stdout.write('0 %s\n' % e)
    sys.stdout.flush()
    sys.exit(1)
sys.stdout.write('%d\n' % server.getsockname()[1])
sys.stdout.flush()
sel = selectors.DefaultSelector()
sel.register(server, selectors.EVENT_READ, 'server')
sel.register(0, selectors.EVENT_READ, 'stdin')
strangers = collections.OrderedDict()     # connection -> [bytes, admit-by time]
rank_of, buffers = {}, {}
count, since, kind_of, reported = {}, {}, {}, set()
tick = min(1.0, seconds / 2.0)
next_check = time.monotonic() + tick
# once every worker is admitted and nobody else waits, the monitor reads in batches: it
# sleeps this long between looks instead of waking at every message (a wake per
# collective takes the core from a worker: 0.12 ms a collective at 10,000 a second)
batch = min(0.05, tick / 10.0)


def drop(conn):
    try:
        sel.unregister(conn)
    except (KeyError, ValueError):
        pass
    conn.close()
    strangers.pop(conn, None)
    rank_of.pop(conn, None)
    buffers.pop(conn, None)


def read(conn, now):
    try:
        data = conn.recv(65536)
    except (BlockingIOError, InterruptedError):
        return
    except OSError:
        data = b''
    if not data:
        drop(conn)
        return
    if conn in strangers:
        buf = strangers[conn][0] + data
        if len(buf) < len(secret) + HELLO.size:
            strangers[conn][0] = buf
            return
        r = HELLO.unpack_from(buf, len(secret))[0]
        if not hmac.compare_digest(buf[:len(secret)], secret) or r >= size:
            drop(conn)                     # not a worker of this job: not a word
            return
        del strangers[conn]
        for other, rr in list(rank_of.items()):
            if rr == r:
                drop(other)                # that rank connects again
        rank_of[conn] = r
        count.setdefault(r, 0)
        since.setdefault(r, now)
        buf = buf[len(secret) + HELLO.size:]
    elif conn in rank_of:
        buf = buffers.get(conn, b'') + data
    else:
        return
    r = rank_of[conn]
    n = len(buf) // MESSAGE.size
    for i in range(n):
        k, kind = MESSAGE.unpack_from(buf, i * MESSAGE.size)
        if k > count[r]:
            count[r], since[r] = k, now
            kind_of.setdefault(k, kind)
    buffers[conn] = buf[n * MESSAGE.size:]


while True:
    wait = max(0.0, next_check - time.monotonic())
    if len(rank_of) == size and not strangers:
        time.sleep(min(wait, batch))
        wait = 0.0
    events = sel.select(wait)
    now = time.monotonic()
    accept = False
    for key, _ in events:              # the admitted and waiting connections first
        if key.data == 'stdin':
            try:
                if not os.read(0, 4096):
                    sys.exit(0)
            except OSError:
                sys.exit(0)
        elif key.data == 'server':
            accept = True
        else:
            read(key.fileobj, now)
    for _ in range(ACCEPTS if accept else 0):
        try:
            conn = server.accept()[0]
        except (BlockingIOError, InterruptedError):
            break
        except OSError:                    # out of descriptors: free the oldest stranger
            if strangers:
                drop(next(iter(strangers)))
            break
        conn.setblocking(False)
        while len(strangers) >= STRANGERS:
            drop(next(iter(strangers)))
        strangers[conn] = [b'', now + ADMIT]
        sel.register(conn, selectors.EVENT_READ, 'conn')
    for conn in [c for c, (_, by) in strangers.items() if by < now]:
        drop(conn)
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
    sys.stderr.write('keras_backend.distribute: stall: ranks %s have not reached %s #%d '
                     'after %g s (ranks %s are waiting)\n'
                     % (behind, KINDS[kind] if kind < len(KINDS) else 'collective', top,
                        seconds, waiting))
    sys.stderr.flush()
"""


class _S(object):
    address = None       # worker 0: (the address its monitor bound, '' for all; the port)
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


def job_secret(env=None):
    """The job's secret for the side channel: ``$KERAS_BACKEND_DISTRIBUTE_SECRET`` (our
    launcher's, 16 to 64 hexadecimal digits), else 32 random bytes in hexadecimal (a job
    started by mpirun or srun). Worker 0's goes to the others in ``init``'s broadcast."""
    import binascii
    from .rendezvous import ENV_SECRET
    env = os.environ if env is None else env
    given = env.get(ENV_SECRET, '').strip().lower()
    if 16 <= len(given) <= _SECRET_LENGTH and all(c in '0123456789abcdef' for c in given):
        return given
    return binascii.hexlify(os.urandom(32)).decode('ascii')


def hello(rank, secret):
    """What a worker sends first on its connection: the job's secret, then its rank."""
    return secret.encode('ascii') + _HELLO.pack(rank)


def _start_monitor(size, seconds, bind, secret):
    """Worker 0: start the monitor on ``bind`` ('' every interface); its port, or 0 (with a
    warning) when it failed."""
    import select
    from .rendezvous import ENV_SECRET
    env = dict(os.environ)
    env[ENV_SECRET] = secret
    try:
        proc = subprocess.Popen(
            [sys.executable, '-S', '-E', '-c', _MONITOR, str(size), repr(float(seconds)),
             bind, ','.join(KINDS), str(_STRANGERS), repr(_ADMIT_SECONDS), str(_ACCEPTS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    except (OSError, ValueError) as e:
        _warn('stall check off: its monitor did not start (%s)' % e)
        return 0
    line = b''
    deadline = time.time() + 30.0
    while not line.endswith(b'\n') and time.time() < deadline:
        if select.select([proc.stdout], [], [], 1.0)[0]:
            got = os.read(proc.stdout.fileno(), 256)
            if not got:
                break
            line += got
    text = line.decode('utf-8', 'replace').strip()
    try:
        port = int(text.split(' ', 1)[0])
    except ValueError:
        port = 0
    if not port:
        _warn('stall check off: its monitor did not listen on %s (%s)'
              % (bind or 'every interface', text[2:] or 'no port reported'))
        try:
            proc.kill()
            proc.wait()
        except OSError:
            pass
        return 0
    _S.monitor = proc
    return port


def _encode(host, port, secret=''):
    import numpy as np
    data = np.zeros(1 + _ADDRESS_LENGTH + _SECRET_LENGTH, np.float32)
    raw = host.encode('utf-8')[:_ADDRESS_LENGTH]
    key = secret.encode('ascii')[:_SECRET_LENGTH]
    data[0] = port
    data[1:1 + len(raw)] = np.frombuffer(raw, np.uint8)
    data[1 + _ADDRESS_LENGTH:1 + _ADDRESS_LENGTH + len(key)] = np.frombuffer(key, np.uint8)
    return data


def _decode(data):
    """(host, port, secret) from :func:`_encode`'s array (summed over the workers)."""
    def text(values):
        raw = bytes(bytearray(int(round(float(b))) for b in values if 0 < b < 256))
        return raw.decode('utf-8', 'replace')
    port = int(round(float(data[0])))
    return (text(data[1:1 + _ADDRESS_LENGTH]), port,
            text(data[1 + _ADDRESS_LENGTH:1 + _ADDRESS_LENGTH + _SECRET_LENGTH]))


def start(rank, size, seconds, place, allreduce_array):
    """Set up the side channel, on every worker, right after the engine's runtime started.

    Every worker calls it (it holds one broadcast: worker 0's monitor address and the
    job's secret, or port 0 when worker 0's check is off, which turns it off everywhere:
    worker 0's setting decides).

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
    from . import rendezvous
    stop()
    port, host, secret, bind = 0, '', '', ''
    if rank == 0 and seconds > 0:
        try:
            host = rank0_host(place)
        except (ValueError, OSError) as e:
            _warn('stall check off: no address for worker 0 (%s)' % e)
            host = None
        if host is not None:
            secret = job_secret()
            bind = rendezvous.listen_address(host)
            port = _start_monitor(size, seconds, bind, secret)
            if port:
                _S.address = (bind, port)
        host = host or ''
    mine = _encode(host, port, secret) if rank == 0 else _encode('', 0)
    host, port, secret = _decode(allreduce_array(mine))
    if not port:
        stop()
        return False
    target = (bind or '127.0.0.1') if rank == 0 else host
    try:
        sock = socket.create_connection((target, port), timeout=30.0)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(hello(rank, secret))
        sock.setblocking(False)
    except (socket.error, OSError, UnicodeError) as e:
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
        _S.address = None
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
