"""The launcher, with one address of this machine taken for another host (for the tests).

    python launch_as_two_hosts.py ADDRESS LAUNCHER_ARGS...

Runs ``python -m keras_backend.distribute LAUNCHER_ARGS`` where ``-H``'s host ADDRESS
(e.g. 127.0.0.1) counts as a second host: its workers start through ``--ssh`` and are
reached at ADDRESS. Together with ``fake_ssh.py`` this simulates a second host: there is
none here, nor an sshd.
"""
import sys

from keras_backend.distribute import launcher


def main():
    other = sys.argv[1]
    is_local = launcher.is_local_host
    launcher.is_local_host = lambda host: host != other and is_local(host)
    return launcher.main(sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
