"""How the launcher keeps hold of its workers, whatever happens to it.

Three layers, each enough on its own for the processes it covers (the tests take each
alone):

* :func:`die_with_parent` (Linux): the ``preexec_fn`` of every process the launcher
  starts (the workers, ``mpiexec``, ``ssh``): ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the
  child between ``fork`` and ``exec``, so that the kernel kills it when the launcher dies,
  SIGKILL included. Where the launcher was gone before the call, the child exits at once.
* the reaper (every POSIX system): a small process (the standard library only) that the
  launcher starts in a session of its own with a pipe as its stdin. The launcher writes
  ``done`` there when it ends normally (its workers stopped). When the pipe closes
  without it (the launcher was killed), the reaper kills every process group registered
  in the launcher's folder (the processes it started, the workers that registered, their
  children included) with SIGKILL, twice 0.5 s apart, and removes the folder.
* the worker's side (``python -m keras_backend.distribute._supervision script args``,
  the command the launcher runs on this machine; it then runs ``_worker`` as before):
  it connects to the launcher's Unix socket in that folder and sends its rank. The
  connection closes when the worker's process ends, however it ends, so the launcher sees
  the workers end in the order they ended: the first to fail is the one it names. A
  daemon thread of the worker waits on a second connection: when the launcher's end
  closes (the launcher died), it kills the worker's process group with SIGKILL (a worker
  whose engine holds Python's GIL in a collective, CNTK's, runs it when the collective
  returns; OpenMPI ends such ranks itself when ``mpiexec`` dies).

This module uses the standard library only and must import on CPython 3.6.
"""
import errno
import os
import signal
import socket
import stat
import subprocess
import sys
import time

#: the launcher's folder: ``<rank>.pid`` / ``<rank>.exit`` (the workers), ``*.group``
#: (the processes the launcher started, one process group each) and the socket
ENV_PIDDIR = 'KERAS_BACKEND_DISTRIBUTE_PIDDIR'
#: the socket's name in that folder
SOCKET_NAME = 'supervise.sock'
#: the CPUs (``0,1,4-7``) the workers of one host divide among themselves (the launcher's
#: ``--bind-to core``): each gets an equal, disjoint share (:func:`cpu_share`)
ENV_CPUS = 'KERAS_BACKEND_DISTRIBUTE_CPUS'
#: the longest path a Unix socket takes (sun_path: 108 bytes on Linux, 104 on the BSDs)
_SOCKET_PATH_MAX = 100

_PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's ``prctl`` (Linux), or None."""
    if not sys.platform.startswith('linux'):
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                          ctypes.c_ulong]
        prctl.restype = ctypes.c_int
        return prctl
    except (OSError, AttributeError, ImportError):
        return None


def die_with_parent():
    """A ``preexec_fn`` for ``subprocess.Popen`` that makes the child die (SIGKILL) when
    this process dies (Linux: ``PR_SET_PDEATHSIG``), or None where there is none.

    The kernel sends the signal when the thread that started the child ends: start the
    child from a thread that lives as long as it should (the launcher's main thread).
    libc is looked up here, before the fork: the function the child runs only calls it.

    Example:
        >>> fn = die_with_parent()
        >>> fn is None or callable(fn)
        True
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec():
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:      # the parent died before the call
            os._exit(1)
    return preexec


# -- which process a pid names -------------------------------------------------------------
# A pid read back from a file may name another process by then: the worker it named was
# reaped and the kernel gave the number to a new process. A registration therefore holds
# the pid and the process's start time (Linux: /proc/<pid>/stat, field 22, in clock ticks
# since boot); a process group is killed only while its leader is that process, or gone
# (a pid that leads a live group is never handed out again, so a group of that number is
# still the one registered).

def start_time(pid):
    """The start time of process ``pid`` (an opaque str), or None where it cannot be read
    (no such process, no /proc)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (IOError, OSError, IndexError, ValueError):
        return None


def identity(pid):
    """The text a registration file holds for process ``pid``: ``'<pid> <start time>'``
    (only the pid where the start time cannot be read)."""
    start = start_time(pid)
    return '%d %s' % (pid, start) if start is not None else '%d' % pid


def parse_identity(text):
    """``(pid, start time or None)`` of an :func:`identity` text.

    Raises:
        ValueError: not a pid (optionally followed by a start time).
    """
    parts = text.split()
    if not 1 <= len(parts) <= 2:
        raise ValueError('expected a pid and a start time, got %r' % (text,))
    return int(parts[0]), (parts[1] if len(parts) == 2 else None)


#: the flag of /proc/<pid>/stat's flags field set when the process starts exiting
_PF_EXITING = 0x4


def ended(pid, start=None):
    """True when process ``pid`` (registered with ``start``) has ended or is ending: no
    such process, one that is exiting (Linux's PF_EXITING: a signal killed it, and the
    kernel is still freeing its memory, which takes milliseconds for a large process), a
    zombie (ended, not yet reaped), or another process that took its pid."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return fields[0] in ('Z', 'X') or bool(int(fields[6]) & _PF_EXITING) or (
            start is not None and fields[19] != start)
    except (IOError, OSError, IndexError, ValueError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass
    return False


def ended_peers(folder, rank):
    """The ranks of the other workers registered in ``folder`` (``<rank>.pid``) whose
    process has ended by now: what a failing worker notes at once, so that the launcher
    names the worker whose end came first, not one that failed because of it."""
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        stem, _, kind = name.rpartition('.')
        if kind != 'pid' or not stem.isdigit() or int(stem) == rank:
            continue
        try:
            with open(os.path.join(folder, name)) as f:
                pid, start = parse_identity(f.read())
        except (IOError, OSError, ValueError):
            continue
        if ended(pid, start):
            out.append(int(stem))
    return sorted(out)


def kill_group(pid, start=None):
    """SIGKILL process group ``pid`` unless its leader is now another process (``start``:
    the start time registered with it; None: not known, the group is killed). Returns
    True when the signal was sent."""
    if pid <= 1:
        return False
    if start is not None:
        now = start_time(pid)
        if now is not None and now != start:
            return False         # the pid was reused: not ours
    try:
        os.killpg(pid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False


# -- CPU binding ---------------------------------------------------------------------------

def parse_cpus(text):
    """The CPU numbers of a list such as ``0,1,4-7`` (Linux's ``cpuset`` syntax), sorted,
    without repeats.

    Raises:
        ValueError: a part that is not a number or a range ``a-b`` with ``a <= b``.

    Example:
        >>> parse_cpus('0,2-4')
        [0, 2, 3, 4]
    """
    cpus = set()
    for part in text.split(','):
        part = part.strip()
        if not part:
            continue
        low, dash, high = part.partition('-')
        if not low.isdigit() or (dash and not high.isdigit()) or (
                dash and int(high) < int(low)):
            raise ValueError('%s: expected CPU numbers and ranges such as 0,2-5, got %r'
                             % (ENV_CPUS, text))
        cpus.update(range(int(low), int(high or low) + 1))
    return sorted(cpus)


def cpu_share(cpus, local_rank, local_size):
    """The CPUs of worker ``local_rank`` of the ``local_size`` on one host, out of ``cpus``:
    ``len(cpus) // local_size`` consecutive ones; None when there are fewer CPUs than
    workers (they then share all of them).

    Example:
        >>> cpu_share([0, 1, 2, 3], 1, 2)
        [2, 3]
    """
    per = len(cpus) // max(1, local_size)
    if per < 1 or not 0 <= local_rank < local_size:
        return None
    return cpus[local_rank * per:(local_rank + 1) * per]


def env_share(env, local_rank, local_size):
    """This worker's share of ``env``'s :data:`ENV_CPUS` (:func:`cpu_share`); None when
    the variable is unset, the share empty or the system cannot bind (not Linux)."""
    text = env.get(ENV_CPUS, '').strip()
    if not text or not hasattr(os, 'sched_setaffinity'):
        return None
    return cpu_share(parse_cpus(text), local_rank, local_size)


def bind(share):
    """Bind this process (and the threads and processes it starts later) to the CPUs
    ``share`` (None: leave it as it is). Engines size their thread pools from the CPUs a
    process may run on (XLA's and TensorFlow's, OpenBLAS'), so workers bound to shares of
    their own do not compete for each other's cores. Also a ``preexec_fn`` step."""
    if share:
        try:
            os.sched_setaffinity(0, share)
        except OSError:        # CPUs this process may not use (a cgroup's cpuset)
            pass


# -- the reaper ----------------------------------------------------------------------------

#: argv: the launcher's folder. Reads its stdin to the end; without 'done' there, kills
#: every process group the folder registers and removes the folder.
_REAPER = r'''
import os, shutil, signal, sys, time
for name in ('SIGINT', 'SIGHUP', 'SIGTERM', 'SIGPIPE'):
    try:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    except (AttributeError, OSError, ValueError):
        pass
folder = sys.argv[1]
said = b''
while True:
    try:
        got = os.read(0, 4096)
    except InterruptedError:
        continue
    except OSError:
        got = b''
    if not got:
        break
    said += got
if b'done' in said:
    sys.exit(0)

def groups():
    out = set()
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        stem, _, kind = name.rpartition('.')
        if kind not in ('pid', 'group'):
            continue
        if kind == 'pid' and os.path.exists(os.path.join(folder, stem + '.exit')):
            continue          # that worker ended by itself
        try:
            with open(os.path.join(folder, name)) as f:
                parts = f.read().split()
            out.add((int(parts[0]), parts[1] if len(parts) > 1 else None))
        except (OSError, ValueError, IndexError):
            pass
    return out

def start_time(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[19]
    except (IOError, OSError, IndexError, ValueError):
        return None

for attempt in range(3):
    for pid, start in groups():
        if pid <= 1:
            continue
        now = start_time(pid) if start is not None else None
        if now is not None and now != start:
            continue       # the pid names another process by now
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    if attempt < 2:
        time.sleep(0.5)
shutil.rmtree(folder, ignore_errors=True)
'''


class Reaper(object):
    """The reaper of the launcher's folder ``folder`` (see the module docstring).

    Args:
        folder: the launcher's folder (it exists).

    Example:
        >>> import tempfile
        >>> r = Reaper(tempfile.mkdtemp())
        >>> r.done()
    """

    def __init__(self, folder):
        self.proc = None
        try:
            self.proc = subprocess.Popen(
                [sys.executable, '-S', '-E', '-c', _REAPER, folder], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, start_new_session=True)
        except (OSError, ValueError) as e:
            sys.stderr.write('keras_backend.distribute: the reaper did not start (%s): '
                             'workers outlive a killed launcher where the kernel does not '
                             'kill them (Linux does)\n' % e)

    def done(self):
        """The launcher ends normally: the reaper exits without killing anything."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.write(b'done\n')
            proc.stdin.close()
        except (IOError, OSError, ValueError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def register_group(folder, name, pid):
    """Write ``<name>.group`` (the :func:`identity` of ``pid``, the leader of a process
    group the reaper kills)."""
    write_file(os.path.join(folder, '%s.group' % name), identity(pid))


def unregister_group(folder, name):
    try:
        os.unlink(os.path.join(folder, '%s.group' % name))
    except OSError:
        pass


def open_no_follow(path, flags, mode=0o644):
    """``os.open(path, flags)`` that never follows a symbolic link at ``path`` (one planted
    there by another user of the folder would make the write land in the file it points
    to) and opens only a regular file. Returns the descriptor (close-on-exec).

    Raises:
        OSError: ``path`` is a symbolic link or not a regular file (the message says so),
            or the open failed.
    """
    try:
        fd = os.open(path, flags | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_CLOEXEC', 0)
                     | getattr(os, 'O_NONBLOCK', 0), mode)
    except OSError as e:
        if e.errno == getattr(errno, 'ELOOP', None) or (os.path.islink(path)):
            raise OSError(e.errno, 'keras_backend.distribute: %s is a symbolic link; files '
                          'this package writes are never opened through one' % path)
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, 'keras_backend.distribute: %s is not a regular '
                          'file' % path)
        if hasattr(os, 'O_NONBLOCK'):      # only there to open a planted FIFO at once
            import fcntl
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file(path, text):
    """Write ``text`` to ``path`` whole (a temporary file of its own renamed over it),
    through :func:`open_no_follow`."""
    tmp = '%s.%d.tmp' % (path, os.getpid())
    fd = open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.rename(tmp, path)



def socket_path(folder):
    """The launcher's socket in ``folder``, or None where the path is too long for one."""
    path = os.path.join(folder, SOCKET_NAME)
    if not hasattr(socket, 'AF_UNIX') or len(path.encode('utf-8')) > _SOCKET_PATH_MAX:
        return None
    return path


# -- the worker's side ---------------------------------------------------------------------

def _rank():
    for name in ('KERAS_BACKEND_DISTRIBUTE_RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK'):
        v = os.environ.get(name, '').strip()
        if v:
            try:
                return int(v)
            except ValueError:
                return None
    return 0


def _high(sock):
    """``sock`` moved to a descriptor above those a worker opens (1000 or more, where the
    limit allows). At exit the kernel releases a process's files from the highest
    descriptor down (Linux 5.x and later run the releases last queued first), and a
    release can wait (the collection of descriptors in flight on Unix sockets): this way
    a worker's end reaches the launcher before the ends of its other connections reach
    its peers, which then fail."""
    try:
        import fcntl
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        low = 1000 if soft == resource.RLIM_INFINITY else min(1000, soft - 64)
        if low <= sock.fileno():
            return sock
        fd = fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD_CLOEXEC, low)
    except (ImportError, AttributeError, ValueError, OSError):
        return sock
    try:
        moved = socket.socket(sock.family, sock.type, sock.proto, fileno=fd)
    except (socket.error, OSError):
        os.close(fd)
        return sock
    sock.close()
    return moved


def connect(env=None, role=''):
    """This worker's connection to the launcher's socket, or None (no launcher folder on
    this host, no socket, or it does not answer). Keep it open for the process's life:
    its closing tells the launcher that this worker ended. ``role='watch'``: the
    connection a thread waits on (:func:`_watch`; a thread blocked on a socket holds it
    open until the thread leaves that call, so the launcher would see this worker's end
    late); ``role='parent'``: the connection of an MPI rank's parent (:func:`parent`),
    which reports the status."""
    env = os.environ if env is None else env
    folder = env.get(ENV_PIDDIR, '')
    rank = _rank()
    path = socket_path(folder) if folder else None
    if path is None or rank is None or not os.path.exists(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if not role:
        s = _high(s)
    try:
        s.settimeout(10.0)
        s.connect(path)
        s.sendall(('%d %s\n' % (rank, role)).strip().encode('ascii') + b'\n')
    except (socket.error, OSError):
        s.close()
        return None
    return s


def _closed_by_launcher(channel):
    """Block until ``channel`` ends: True when the launcher's side closed it (the launcher
    died, or ended without stopping this process), False when it was closed here."""
    while True:
        try:
            if not channel.recv(64):
                return True
        except InterruptedError:
            continue
        except (socket.error, OSError):
            return False


def _watch(channel):
    """Block on the launcher's side of ``channel``: when it closes (the launcher died, or
    ended without stopping this worker), kill this worker's process group (this process
    and what it started) with SIGKILL."""
    if not _closed_by_launcher(channel):
        return            # not the launcher's end (the descriptor was closed here)
    try:
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    except OSError:
        os._exit(1)


class _Held(object):
    channel = None        # open until this process ends: its end tells the launcher
    watched = None        # the launcher's death closes it


def main():
    """A worker the launcher starts itself: its channels, then ``_worker``'s
    ``__main__``."""
    _Held.channel = connect()
    watched = _Held.watched = connect(role='watch') if _Held.channel is not None else None
    if watched is not None:
        import threading
        watched.settimeout(None)
        threading.Thread(target=_watch, args=(watched,), name='keras_backend-supervision',
                         daemon=True).start()
    import runpy
    runpy.run_module('keras_backend.distribute._worker', run_name='__main__',
                     alter_sys=True)


def _env_int(name, default):
    try:
        return int(os.environ.get(name, '').strip())
    except ValueError:
        return default


#: the signals an MPI rank's parent passes on to its worker (mpiexec's, the user's)
_FORWARDED = ('SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR1', 'SIGUSR2', 'SIGCONT')


def parent_command(script, args):
    """The command ``mpiexec`` runs for each rank: this file as a plain script (the
    standard library only, ``-I -S``: no site, no environment variables of Python's, not
    even this folder on ``sys.path``) with ``--parent``, which runs the worker as its
    child (:func:`parent`)."""
    return [sys.executable, '-I', '-S', os.path.abspath(__file__), '--parent', script] + \
        list(args)


def parent(argv):
    """An MPI rank's process: it runs ``python -m keras_backend.distribute._worker ARGV``
    as its child (MPI joins a process that mpiexec did not start itself, as under
    ``mpiexec sh -c``), gives it a channel of its own to the launcher (its end closes it,
    at the moment the worker's other connections close: the launcher sees the ends in
    the order they happened), holds a second channel, and when the worker ends sends
    ``status N`` on it (negative: minus the signal that killed it; mpiexec reaps its
    ranks, so nothing else could tell the launcher that signal), then ends the same way
    itself.
    Signals from mpiexec or the user reach the worker's process group; the launcher's
    death kills it (the channel's watch); this process's death too (the kernel,
    :func:`die_with_parent`). It first binds itself to its share of :data:`ENV_CPUS`
    (the launcher's ``--bind-to core``), which the worker inherits."""
    bind(env_share(os.environ, _env_int('OMPI_COMM_WORLD_LOCAL_RANK', 0),
                   _env_int('OMPI_COMM_WORLD_LOCAL_SIZE', 1)))
    channel = connect(role='parent')
    own = connect()       # the worker's: it closes when the worker's process ends
    proc = subprocess.Popen([sys.executable, '-m', 'keras_backend.distribute._worker'] +
                            list(argv), start_new_session=True, preexec_fn=die_with_parent(),
                            pass_fds=() if own is None else (own.fileno(),))
    if own is not None:
        own.close()

    def forward(signum, frame):
        for kill in (os.killpg, os.kill):
            try:
                kill(proc.pid, signum)
                return
            except OSError:
                pass
    for name in _FORWARDED:
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, forward)
    if channel is not None:
        import threading

        def watch():
            if not _closed_by_launcher(channel):
                return
            forward(signal.SIGKILL, None)
            os.kill(os.getpid(), signal.SIGKILL)
        channel.settimeout(None)
        threading.Thread(target=watch, daemon=True).start()
    rc = proc.wait()
    ended = time.monotonic()         # the launcher orders the failures by these times
    if channel is not None:
        try:
            channel.sendall(('status %d %r\n' % (rc, ended)).encode('ascii'))
        except (socket.error, OSError):
            pass
    if rc < 0:
        try:
            signal.signal(-rc, signal.SIG_DFL)
            os.kill(os.getpid(), -rc)
        except (OSError, ValueError):
            pass
        return 128 - rc
    return rc


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--parent':
        sys.exit(parent(sys.argv[2:]))
    main()
