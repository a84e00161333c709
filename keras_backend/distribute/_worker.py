"""One worker under the launcher: ``python -m keras_backend.distribute._worker script [args]``.

It puts itself in a process group (and session) of its own, so that the launcher can
kill it and everything it started at once, registers its pid and, at exit, its status in
the launcher's folder ($KERAS_BACKEND_DISTRIBUTE_PIDDIR, ``<rank>.pid`` / ``<rank>.exit``),
then runs the script as ``__main__``; at its end it waits for the last commit of every
:class:`~keras_backend.distribute.State` (a failed write makes the status 1). On another
host than the launcher's (ssh, ``mpiexec -H``) that folder does not exist and nothing is
registered.
"""
import os
import runpy
import sys
import time

from keras_backend.distribute import _supervision


def _rank():
    for name in ('KERAS_BACKEND_DISTRIBUTE_RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK'):
        v = os.environ.get(name, '').strip()
        if v:
            return int(v)
    return 0


def main():
    if len(sys.argv) < 2:
        sys.stderr.write('usage: python -m keras_backend.distribute._worker script [args]\n')
        return 2
    try:
        os.setsid()
    except OSError:     # already a group leader (started with start_new_session)
        pass
    piddir = os.environ.get('KERAS_BACKEND_DISTRIBUTE_PIDDIR', '')
    if piddir and not os.path.isdir(piddir):
        piddir = ''     # started on another host (ssh, mpiexec -H): the launcher's folder
    rank = _rank()
    if piddir:
        _supervision.write_file(os.path.join(piddir, '%d.pid' % rank),
                                 _supervision.identity(os.getpid()))
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    status = 1
    failed_at = None        # when the script failed, on this host's monotonic clock,
    ended = []              # and the peers whose process had ended by then
    try:
        runpy.run_path(script, run_name='__main__')
        status = 0
    except SystemExit as e:
        failed_at = time.monotonic()
        if e.code not in (None, 0) and piddir:
            ended = _supervision.ended_peers(piddir, rank)
        code = e.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            sys.stderr.write('%s\n' % (code,))
    except BaseException:
        failed_at = time.monotonic()
        if piddir:
            ended = _supervision.ended_peers(piddir, rank)
        import traceback
        traceback.print_exc()
        status = 1
    finally:
        # a State's last commit reaches the disk on every exit path (os._exit below skips
        # the atexit hook that waits for it), and a failed one fails the worker
        elastic = sys.modules.get('keras_backend.distribute.elastic')
        if elastic is not None and elastic.flush_all() and status == 0:
            status = 1
        if piddir:
            try:
                # the status, and for a failure its time: the launcher names the worker
                # that failed first, not the first whose end it saw
                _supervision.write_file(os.path.join(piddir, '%d.exit' % rank), (
                    '%d %r %s' % (status, failed_at, ','.join(map(str, ended)) or '-')
                    if status and failed_at is not None else str(status)))
            except (IOError, OSError):
                pass
    return status


if __name__ == '__main__':
    sys.stdout.flush()
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: no engine's atexit hooks wait on peers that are gone
    if code != 0:
        os._exit(code)
    sys.exit(0)
