"""A stand-in for ssh in the launcher's tests: it simulates a second host on this machine.

    python fake_ssh.py LOG -tt HOST COMMAND

Writes its arguments to LOG (JSON), then runs COMMAND with ``/bin/sh -c`` in an
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
    if len(args) != 3 or args[0] != '-tt':
        sys.stderr.write('fake_ssh: expected -tt HOST COMMAND, got %r\n' % (args,))
        return 255
    env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': os.environ.get('HOME', '/'),
           'HOSTNAME': args[1]}
    os.chdir('/')       # sshd starts in the home folder: the command must cd itself
    os.execve('/bin/sh', ['/bin/sh', '-c', args[2]], env)


if __name__ == '__main__':
    sys.exit(main())
