"""A stand-in for ssh in the launcher's tests: it simulates a second host on this machine.

    python fake_ssh.py LOG -tt -- HOST COMMAND

Writes its arguments to LOG (JSON), then (only for ``-tt -- HOST COMMAND``: the launcher
must end ssh's options with ``--``) runs COMMAND with ``/bin/sh -c`` in an
environment of its own, as sshd would on HOST: only PATH, HOME and HOSTNAME=HOST (so
everything else the worker needs must come through COMMAND), and exits with its status.
"""
import json
import os
import sys


def main():
    log, args = sys.argv[1], sys.argv[2:]
    with open(log, 'a') as f:
        f.write(json.dumps(args) + '\n')
    if len(args) != 4 or args[:2] != ['-tt', '--'] or args[2].startswith('-'):
        sys.stderr.write('fake_ssh: expected -tt -- HOST COMMAND, got %r\n' % (args,))
        return 255
    env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': os.environ.get('HOME', '/'),
           'HOSTNAME': args[2]}
    os.chdir('/')       # sshd starts in the home folder: the command must cd itself
    os.execve('/bin/sh', ['/bin/sh', '-c', args[3]], env)


if __name__ == '__main__':
    sys.exit(main())
