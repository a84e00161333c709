"""Where the workers come from and how they find each other, read from the environment.

:func:`keras_backend.distribute.init` asks :func:`placement` which tool started this
process and where it stands (rank, size, local rank and size), then, for the engines
whose workers do not come from MPI (the ``workers`` column of the engine table,
:data:`keras_backend.engines.TABLE`: ``tf_config`` and ``coordinator``), asks
:func:`rendezvous` for what the engine needs to find the others:

* our launcher (``python -m keras_backend.distribute``): it wrote ``TF_CONFIG`` or the
  coordinator address already; nothing to do;
* ``mpirun`` / ``mpiexec`` (OpenMPI's ``OMPI_COMM_WORLD_*``, or ``PMI_*``): every rank
  reserves a free port (:func:`reserve_port`, held until its engine starts) and one
  ``MPI_Allgather`` (mpi4py) shares the ``host:port`` pairs; TensorFlow's cluster is the
  list of them, JAX's coordinator is rank 0's;
* Slurm's ``srun`` (``SLURM_PROCID``, ``SLURM_STEP_NODELIST`` ...): each task's node
  comes from the node list (:func:`expand_hostlist`) and the tasks per node
  (:func:`expand_tasks_per_node`) in Slurm's distribution (block or cyclic), its port from
  ``SLURM_STEP_RESV_PORTS`` (``srun --resv-ports``) or else from the job and step ids
  (:func:`slurm_ports`); no collective is needed.

The MPI engines (Theano/PyTensor, CNTK) need none of this: MPI starts them (under
``srun``, through Slurm's PMI / PMIx, when OpenMPI was built with Slurm support).

This module uses the standard library only and must import on CPython 3.6.
"""
import os
import socket
import struct
import sys

#: this host's address as the other workers reach it (an IP address or a host name)
ENV_ADDRESS = 'KERAS_BACKEND_DISTRIBUTE_ADDRESS'
#: the network interface whose IPv4 address is this host's address (e.g. ``eth0``, ``ib0``)
ENV_INTERFACE = 'KERAS_BACKEND_DISTRIBUTE_INTERFACE'
#: Slurm without ``--resv-ports``: the first port of this step's block (default: derived
#: from ``SLURM_JOB_ID`` and ``SLURM_STEP_ID``)
ENV_PORT = 'KERAS_BACKEND_DISTRIBUTE_PORT'
#: the job's secret (hex), made by our launcher for each launch; the stall check's side
#: channel admits only connections that present worker 0's (its own, else one it draws)
ENV_SECRET = 'KERAS_BACKEND_DISTRIBUTE_SECRET'

LAUNCHER, MPI, SLURM = 'launcher', 'mpi', 'slurm'

#: Slurm without reserved ports: a block of this many ports per job step and node, the
#: block chosen by the job and step ids in ``[SLURM_PORT_LOW, SLURM_PORT_HIGH)``
SLURM_PORT_BLOCK = 64
SLURM_PORT_LOW, SLURM_PORT_HIGH = 20000, 60000


class Placement(object):
    """Where this process stands among the workers.

    Attributes:
        source: what started it: :data:`LAUNCHER`, :data:`MPI`, :data:`SLURM`, or None
            (started alone).
        rank, size, local_rank, local_size: ints.
        hosts: Slurm only: the node of every task, in rank order (a list of names).
        local_ranks: Slurm only: each task's index on its node, in rank order.
    """

    def __init__(self, source, rank, size, local_rank, local_size, hosts=None,
                 local_ranks=None):
        self.source = source
        self.rank, self.size = rank, size
        self.local_rank, self.local_size = local_rank, local_size
        self.hosts = hosts
        self.local_ranks = local_ranks

    def __repr__(self):
        return '<Placement %s: rank %d of %d, local %d of %d>' % (
            self.source, self.rank, self.size, self.local_rank, self.local_size)


def _int(env, name, default=None):
    v = env.get(name, '').strip()
    if not v:
        if default is None:
            raise ValueError('environment variable %s is not set (it should hold an '
                             'integer)' % name)
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError('environment variable %s must be an integer, got %r' % (name, v))


def _first_int(env, names, default):
    for n in names:
        if env.get(n, '').strip():
            return _int(env, n)
    return default


def _split_top(text):
    """Split ``text`` at the commas outside brackets."""
    parts, depth, cur = [], 0, ''
    for ch in text:
        if ch == '[':
            depth += 1
        elif ch == ']':
            depth -= 1
            if depth < 0:
                raise ValueError('Slurm host list %r: a "]" without its "["' % text)
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    if depth != 0:
        raise ValueError('Slurm host list %r: a "[" without its "]"' % text)
    parts.append(cur)
    return parts


def _expand_range(spec, text):
    """The numbers of one bracket, e.g. ``'01-03,07'`` -> ``['01', '02', '03', '07']``
    (leading zeros kept: the width of the lower bound)."""
    out = []
    for item in spec.split(','):
        item = item.strip()
        if not item:
            raise ValueError('Slurm host list %r: an empty item in [%s]' % (text, spec))
        if '-' in item:
            lo, hi = item.split('-', 1)
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise ValueError('Slurm host list %r: %r is not a range low-high of '
                                 'numbers' % (text, item))
            width = len(lo)
            out.extend('%0*d' % (width, i) for i in range(int(lo), int(hi) + 1))
        elif item.isdigit():
            out.append(item)
        else:
            raise ValueError('Slurm host list %r: %r is not a number or a range'
                             % (text, item))
    return out


def expand_hostlist(text):
    """Slurm's compressed host list as the names it stands for, in order.

    Args:
        text: a host list as Slurm writes it (``SLURM_STEP_NODELIST``,
            ``SLURM_JOB_NODELIST``): names separated by commas, each with any number of
            bracketed ranges (``node[01-03,07]``, ``rack[1-2]-gpu[3,5]``).

    Returns:
        list of str, with duplicates kept as Slurm lists them.

    Raises:
        ValueError: unbalanced brackets, an empty name, or a range that is not
            ``low-high`` of numbers with ``low <= high``.

    Example:
        >>> expand_hostlist('node[01-03,07],gpu5')
        ['node01', 'node02', 'node03', 'node07', 'gpu5']
        >>> expand_hostlist('r[1-2]-n[8,10]')
        ['r1-n8', 'r1-n10', 'r2-n8', 'r2-n10']
    """
    if not isinstance(text, str):
        raise TypeError('expand_hostlist: text must be a str, got %r' % type(text).__name__)
    hosts = []
    for part in _split_top(text.strip()):
        part = part.strip()
        if not part:
            raise ValueError('Slurm host list %r: an empty host name' % text)
        names = ['']
        rest = part
        while rest:
            i = rest.find('[')
            if i < 0:
                names = [n + rest for n in names]
                break
            j = rest.find(']', i)
            prefix, spec, rest = rest[:i], rest[i + 1:j], rest[j + 1:]
            names = [n + prefix + num for n in names for num in _expand_range(spec, text)]
        hosts.extend(names)
    return hosts


def expand_tasks_per_node(text, nodes=None):
    """Slurm's tasks-per-node list (``SLURM_STEP_TASKS_PER_NODE``) as one int per node.

    Args:
        text: e.g. ``'2(x3),1'`` (2 tasks on each of 3 nodes, then 1) or ``'4'``.
        nodes: the number of nodes; a single count without ``(xN)`` is repeated for
            each (``SLURM_NTASKS_PER_NODE``'s form).

    Returns:
        list of int.

    Raises:
        ValueError: an item that is not ``N`` or ``N(xM)``.

    Example:
        >>> expand_tasks_per_node('2(x3),1')
        [2, 2, 2, 1]
        >>> expand_tasks_per_node('4', nodes=2)
        [4, 4]
    """
    counts = []
    for item in text.strip().split(','):
        item = item.strip()
        try:
            if '(x' in item and item.endswith(')'):
                n, times = item[:-1].split('(x')
                counts.extend([int(n)] * int(times))
            else:
                counts.append(int(item))
        except ValueError:
            raise ValueError('Slurm tasks per node %r: %r is not N or N(xM)' % (text, item))
    if nodes is not None and len(counts) == 1 and nodes > 1:
        counts = counts * nodes
    return counts


def slurm_layout(tasks_per_node, distribution='block'):
    """The node and the index on that node of every task, as Slurm places them.

    Args:
        tasks_per_node: list of int, one per node (:func:`expand_tasks_per_node`).
        distribution: ``SLURM_DISTRIBUTION``'s first part: ``'block'`` (Slurm's default:
            tasks 0..n0-1 on the first node ...) or ``'cyclic'`` (one task per node in
            turn, skipping full nodes).

    Returns:
        list of ``(node_index, local_index)``, one per task in rank order.

    Raises:
        ValueError: another distribution (``plane``, ``arbitrary``), whose placement the
            environment does not tell.

    Example:
        >>> slurm_layout([2, 1])
        [(0, 0), (0, 1), (1, 0)]
        >>> slurm_layout([2, 1], 'cyclic')
        [(0, 0), (1, 0), (0, 1)]
    """
    dist = (distribution or 'block').split(':')[0].split(',')[0].strip().lower()
    if dist in ('block', ''):
        return [(node, i) for node, n in enumerate(tasks_per_node) for i in range(n)]
    if dist == 'cyclic':
        out, given = [], [0] * len(tasks_per_node)
        while len(out) < sum(tasks_per_node):
            for node, n in enumerate(tasks_per_node):
                if given[node] < n:
                    out.append((node, given[node]))
                    given[node] += 1
        return out
    raise ValueError('SLURM_DISTRIBUTION=%r: keras_backend.distribute knows where Slurm '
                     'puts each task only for block and cyclic distributions; start with '
                     'srun --distribution=block, or with mpirun' % distribution)


def slurm_ports(env, local_size):
    """The port of each task index on a node, for the TensorFlow and JAX rendezvous under
    Slurm (the same on every node).

    Args:
        env: the environment (a mapping).
        local_size: the most tasks on one node.

    Returns:
        list of ``local_size`` ints: ``SLURM_STEP_RESV_PORTS`` (``srun --resv-ports``,
        e.g. ``'12000-12003'``) when set; else ``$KERAS_BACKEND_DISTRIBUTE_PORT`` + i;
        else a block of :data:`SLURM_PORT_BLOCK` ports chosen by the job and step ids, so
        that the steps of one job and the jobs sharing a node take different ports.

    Raises:
        ValueError: fewer reserved ports than tasks on a node, or more than
            :data:`SLURM_PORT_BLOCK` tasks on a node without reserved ports.

    Example:
        >>> slurm_ports({'SLURM_STEP_RESV_PORTS': '12000-12001'}, 2)
        [12000, 12001]
        >>> slurm_ports({'SLURM_JOB_ID': '1', 'SLURM_STEP_ID': '0'}, 2)
        [20512, 20513]
    """
    reserved = env.get('SLURM_STEP_RESV_PORTS', '').strip()
    if reserved:
        ports = [int(p) for p in _expand_range(reserved, reserved)]
        if len(ports) < local_size:
            raise ValueError('SLURM_STEP_RESV_PORTS=%r holds %d ports for %d tasks on a node'
                             % (reserved, len(ports), local_size))
        return ports[:local_size]
    if env.get(ENV_PORT, '').strip():
        base = _int(env, ENV_PORT)
    else:
        if local_size > SLURM_PORT_BLOCK:
            raise ValueError('%d tasks on a node: more than the %d ports keras_backend.'
                             'distribute derives from SLURM_JOB_ID; use srun --resv-ports or '
                             'set %s' % (local_size, SLURM_PORT_BLOCK, ENV_PORT))
        job = _int(env, 'SLURM_JOB_ID')
        step = _first_int(env, ('SLURM_STEP_ID', 'SLURM_STEPID'), 0)
        blocks = (SLURM_PORT_HIGH - SLURM_PORT_LOW) // SLURM_PORT_BLOCK
        base = SLURM_PORT_LOW + ((job * 8 + step) % blocks) * SLURM_PORT_BLOCK
    return [base + i for i in range(local_size)]


def placement(env=None):
    """Which tool started this process and where it stands among the workers.

    Read in this order (the first that is set wins): our launcher's
    ``KERAS_BACKEND_DISTRIBUTE_RANK/SIZE/LOCAL_RANK``; OpenMPI's ``OMPI_COMM_WORLD_*``
    (``mpirun``, also inside a Slurm allocation); a Slurm job step (``srun``: a
    ``SLURM_STEP_NODELIST`` and ``SLURM_PROCID``; a batch script run without ``srun``
    is one process); MPICH-style ``PMI_RANK`` / ``PMI_SIZE``.

    Args:
        env: the environment (default ``os.environ``).

    Returns:
        :class:`Placement`; ``source`` None and size 1 when nothing is set.

    Raises:
        ValueError: a variable that is not an integer, a rank outside ``0 .. size-1``,
            or Slurm variables that disagree (node list vs tasks per node).

    Example:
        >>> placement({'OMPI_COMM_WORLD_RANK': '1', 'OMPI_COMM_WORLD_SIZE': '2'})
        <Placement mpi: rank 1 of 2, local 1 of 2>
    """
    env = os.environ if env is None else env
    have = lambda name: bool(env.get(name, '').strip())   # noqa: E731
    if have('KERAS_BACKEND_DISTRIBUTE_SIZE') or have('KERAS_BACKEND_DISTRIBUTE_RANK'):
        size = _int(env, 'KERAS_BACKEND_DISTRIBUTE_SIZE', 1)
        rank = _int(env, 'KERAS_BACKEND_DISTRIBUTE_RANK', 0)
        got = Placement(LAUNCHER, rank, size,
                        _int(env, 'KERAS_BACKEND_DISTRIBUTE_LOCAL_RANK', rank),
                        _int(env, 'KERAS_BACKEND_DISTRIBUTE_LOCAL_SIZE', size))
    elif have('OMPI_COMM_WORLD_SIZE'):
        size = _int(env, 'OMPI_COMM_WORLD_SIZE')
        rank = _int(env, 'OMPI_COMM_WORLD_RANK', 0)
        got = Placement(MPI, rank, size, _int(env, 'OMPI_COMM_WORLD_LOCAL_RANK', rank),
                        _int(env, 'OMPI_COMM_WORLD_LOCAL_SIZE', size))
    elif have('SLURM_PROCID') and (have('SLURM_STEP_NODELIST') or have('SLURM_STEP_ID')
                                   or have('SLURM_STEPID')):
        got = _slurm_placement(env)
    elif have('PMI_SIZE'):
        size = _int(env, 'PMI_SIZE')
        rank = _int(env, 'PMI_RANK', 0)
        got = Placement(MPI, rank, size, _first_int(env, ('MPI_LOCALRANKID',), rank),
                        _first_int(env, ('MPI_LOCALNRANKS',), size))
    else:
        got = Placement(None, 0, 1, 0, 1)
    if got.size < 1 or not 0 <= got.rank < got.size:
        raise ValueError('rank %d of %d workers (from %s) is not a valid placement'
                         % (got.rank, got.size, got.source))
    if not 0 <= got.local_rank < max(got.local_size, 1):
        raise ValueError('local rank %d of %d on this host (from %s) is not a valid placement'
                         % (got.local_rank, got.local_size, got.source))
    return got


def _slurm_placement(env):
    rank = _int(env, 'SLURM_PROCID')
    size = _first_int(env, ('SLURM_STEP_NUM_TASKS', 'SLURM_NTASKS', 'SLURM_NPROCS'), 1)
    nodelist = env.get('SLURM_STEP_NODELIST', '').strip() or \
        env.get('SLURM_JOB_NODELIST', '').strip() or env.get('SLURM_NODELIST', '').strip()
    if not nodelist:
        raise ValueError('Slurm step without SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST): '
                         'keras_backend.distribute needs the node list')
    nodes = expand_hostlist(nodelist)
    per_node = env.get('SLURM_STEP_TASKS_PER_NODE', '').strip() or \
        env.get('SLURM_TASKS_PER_NODE', '').strip() or \
        env.get('SLURM_NTASKS_PER_NODE', '').strip()
    counts = expand_tasks_per_node(per_node, len(nodes)) if per_node else \
        [size // len(nodes) + (1 if i < size % len(nodes) else 0) for i in range(len(nodes))]
    if len(counts) != len(nodes) or sum(counts) != size:
        raise ValueError('Slurm: %d tasks on the nodes %r with tasks per node %r do not add '
                         'up (SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE, SLURM_NTASKS)'
                         % (size, nodes, per_node))
    layout = slurm_layout(counts, env.get('SLURM_DISTRIBUTION', 'block'))
    node, local = layout[rank] if 0 <= rank < size else (0, 0)
    if env.get('SLURM_NODEID', '').strip() and _int(env, 'SLURM_NODEID') != node or \
            env.get('SLURM_LOCALID', '').strip() and _int(env, 'SLURM_LOCALID') != local:
        raise ValueError('Slurm placed task %d on node %s, local id %s; keras_backend.'
                         'distribute expected node %d, local id %d from SLURM_DISTRIBUTION=%r '
                         '(start with srun --distribution=block)'
                         % (rank, env.get('SLURM_NODEID'), env.get('SLURM_LOCALID'), node,
                            local, env.get('SLURM_DISTRIBUTION', 'block')))
    return Placement(SLURM, rank, size, local, counts[node],
                     hosts=[nodes[n] for n, _ in layout],
                     local_ranks=[i for _, i in layout])


# -- this host's address -----------------------------------------------------------------

def _interface_ipv4(name):
    """The IPv4 address of network interface ``name`` (Linux ``SIOCGIFADDR``), or None."""
    try:
        import fcntl
    except ImportError:
        return None
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        packed = fcntl.ioctl(s.fileno(), 0x8915,   # SIOCGIFADDR
                             struct.pack('256s', name[:15].encode('utf-8')))
        return socket.inet_ntoa(packed[20:24])
    except (IOError, OSError):
        return None
    finally:
        s.close()


def interfaces():
    """``[(name, ipv4)]`` of this host's network interfaces that have an IPv4 address,
    in the kernel's order (Linux; an empty list where they cannot be listed)."""
    try:
        names = [n for _, n in socket.if_nameindex()]
    except (AttributeError, OSError):
        return []
    out = []
    for n in names:
        ip = _interface_ipv4(n)
        if ip:
            out.append((n, ip))
    return out


def is_loopback(address):
    """True for ``127.x.x.x``, ``::1`` and ``localhost``."""
    return address.startswith('127.') or address in ('::1', 'localhost')


def choose_address(candidates):
    """The first non-loopback address of ``candidates``, else the loopback.

    Args:
        candidates: ``[(interface, ipv4)]`` (:func:`interfaces`).

    Returns:
        ``(address, is_loopback)``: ``('127.0.0.1', True)`` when every candidate is a
        loopback address (or there are none).

    Example:
        >>> choose_address([('lo', '127.0.0.1'), ('eth0', '10.1.2.3')])
        ('10.1.2.3', False)
        >>> choose_address([('lo', '127.0.0.1')])
        ('127.0.0.1', True)
    """
    for _, ip in candidates:
        if not is_loopback(ip) and not ip.startswith('169.254.'):
            return ip, False
    return '127.0.0.1', True


def host_address(env=None, warn=True):
    """This host's address as the workers on other hosts reach it.

    In this order: ``$KERAS_BACKEND_DISTRIBUTE_ADDRESS`` (used as it is: an address or a
    host name); the IPv4 address of ``$KERAS_BACKEND_DISTRIBUTE_INTERFACE``; the first
    non-loopback IPv4 address of the host's interfaces (:func:`interfaces`), else of its
    host name; else ``127.0.0.1``, with one line on stderr saying that only workers of
    this host can then join.

    Args:
        env: the environment (default ``os.environ``).
        warn: write that line when falling back to the loopback.

    Returns:
        str.

    Raises:
        ValueError: ``$KERAS_BACKEND_DISTRIBUTE_INTERFACE`` names no interface with an
            IPv4 address (the message lists those there are).

    Example:
        >>> host_address({'KERAS_BACKEND_DISTRIBUTE_ADDRESS': 'node7.cluster'})
        'node7.cluster'
        >>> host_address({'KERAS_BACKEND_DISTRIBUTE_INTERFACE': 'lo'})
        '127.0.0.1'
    """
    env = os.environ if env is None else env
    given = env.get(ENV_ADDRESS, '').strip()
    if given:
        return given
    name = env.get(ENV_INTERFACE, '').strip()
    if name:
        ip = _interface_ipv4(name)
        if ip is None:
            raise ValueError('%s=%r: no such network interface with an IPv4 address; this '
                             'host has %s' % (ENV_INTERFACE, name, ', '.join(
                                 '%s (%s)' % c for c in interfaces()) or 'none listed'))
        return ip
    candidates = interfaces()
    try:
        candidates += [('hostname', ip) for ip in
                       socket.gethostbyname_ex(socket.gethostname())[2]]
    except (socket.error, OSError):
        pass
    ip, loopback = choose_address(candidates)
    if loopback and warn:
        sys.stderr.write('keras_backend.distribute: this host has no non-loopback IPv4 '
                         'address; using 127.0.0.1, so only workers on this host can join '
                         '(set %s or %s)\n' % (ENV_ADDRESS, ENV_INTERFACE))
    return ip


def _is_ip(text, family):
    try:
        socket.inet_pton(family, text.split('%', 1)[0])
    except (socket.error, OSError, ValueError):
        return False
    return True


def _bindable(address, family):
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((address, 0))
        return True
    except (socket.error, OSError):
        return False
    finally:
        s.close()


def listen_address(host):
    """The address a service binds (the stall check's monitor, JAX's coordinator) that
    the other workers reach at ``host``: listen there only, not on every interface.

    Args:
        host: worker 0's host as the rendezvous gives it (an address or a host name,
            IPv6 with or without brackets).

    Returns:
        ``host`` itself when it is an IPv4 or IPv6 address (127.0.0.1 under our launcher on
        one host, the ``--network-interface`` address on several); ``'127.0.0.1'`` for
        ``localhost``; for another name, the first address it resolves to here that is
        not a loopback address and that a socket here can bind; else ``''`` (every
        interface: a name that resolves only to a loopback address here, as
        ``/etc/hosts`` often maps the host's own name, may still be how the other hosts
        reach it).

    Example:
        >>> listen_address('127.0.0.1'), listen_address('[fd00::2]'), listen_address('localhost')
        ('127.0.0.1', 'fd00::2', '127.0.0.1')
    """
    host = host.strip()
    if host.startswith('[') and host.endswith(']'):
        host = host[1:-1]
    if _is_ip(host, socket.AF_INET) or _is_ip(host, socket.AF_INET6):
        return host
    if host == 'localhost':
        return '127.0.0.1'
    if not host:
        return ''
    try:
        infos = socket.getaddrinfo(host, None, 0, socket.SOCK_STREAM)
    except (socket.error, OSError, UnicodeError):
        return ''
    for family, _, _, _, sockaddr in infos:
        address = sockaddr[0]
        if family not in (socket.AF_INET, socket.AF_INET6) or is_loopback(address):
            continue
        if _bindable(address, family):
            return address
    return ''


def free_ports(n):
    """``n`` distinct TCP ports free on every address of this host (each bound at once on
    the wildcard address, then all released). The launcher's ports come from here.

    Probed on the wildcard address because that is where TensorFlow's gRPC server binds
    (``0.0.0.0:port``): a port that a socket of another process listens on at one address
    only (``127.0.0.1``, the node's IP) passes a probe at another address and then fails
    the server's bind ("Could not start gRPC server")."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('', 0))
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


#: the sockets holding the ports this process reserved for its own servers
#: (:func:`reserve_port`), until :func:`release_ports`
_RESERVED = []


def reserve_port():
    """A TCP port free on every address of this host, held by this process for a server
    it will start itself (TensorFlow's gRPC server, JAX's coordinator) until
    :func:`release_ports`.

    Between choosing a port and an engine binding it, the other workers must learn it
    (over MPI, through Ray) and the engine must import: seconds, in which a port merely
    found free can be taken by another process (a ``connect`` draws its local port from
    the same range). A socket bound to it, without ``SO_REUSEADDR`` and not listening,
    keeps the kernel from handing it to anyone else; :func:`keras_backend.distribute.init`
    calls :func:`release_ports` right before the engine's runtime starts.

    Returns:
        the port (int).

    Raises:
        OSError: this host has no free port (the kernel's error).

    Example:
        >>> port = reserve_port()
        >>> release_ports()
        1
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(('', 0))
    except (socket.error, OSError):
        s.close()
        raise
    _RESERVED.append(s)
    return s.getsockname()[1]


def release_ports():
    """Close the sockets of :func:`reserve_port`, so that this process's servers can bind
    those ports. Returns how many were held (int)."""
    n = len(_RESERVED)
    while _RESERVED:
        _RESERVED.pop().close()
    return n


def _host_port(host, port):
    """``host:port``, with an IPv6 address in brackets (``[fd00::2]:4000``)."""
    if ':' in host and not host.startswith('['):
        host = '[%s]' % host
    return '%s:%d' % (host, port)


def _is_this_host(node):
    names = set([socket.gethostname(), socket.gethostname().split('.')[0]])
    try:
        names.add(socket.getfqdn())
    except (socket.error, OSError):
        pass
    return node in names or node.split('.')[0] in names


# -- an MPI communicator made without mpiexec (the Ray executor) ---------------------------

class _Comm(object):
    comm = None


def set_mpi_communicator(comm):
    """Make ``comm`` (an ``mpi4py.MPI.Intracomm``) the communicator of the MPI engines'
    collectives in this process, in place of ``MPI.COMM_WORLD``; None restores
    ``COMM_WORLD``.

    The Ray executor (:mod:`keras_backend.distribute.ray`) has no ``mpiexec``: its workers
    start as MPI singletons (each its own ``COMM_WORLD`` of one process), join through
    OpenMPI's ``ompi-server`` (``MPI_Comm_accept`` / ``MPI_Comm_connect``, then
    ``MPI_Intercomm_merge``) and call this before :func:`keras_backend.distribute.init`,
    whose engine module (``start()``) then takes :func:`mpi_communicator`. Its rank and
    size must be the placement's (``KERAS_BACKEND_DISTRIBUTE_RANK/SIZE``).

    Args:
        comm: an mpi4py intracommunicator, or None.

    Returns:
        None.

    Example:
        >>> set_mpi_communicator(None)
        >>> mpi_communicator() is None
        True
    """
    _Comm.comm = comm


def mpi_communicator():
    """The communicator :func:`set_mpi_communicator` gave, or None (use ``COMM_WORLD``)."""
    return _Comm.comm


# -- the rendezvous of the TensorFlow and JAX engines --------------------------------------

#: Open MPI's variable that picks ``MPI_Iallreduce``'s algorithm, and the value our
#: workers give it before MPI starts unless the environment names one: 1, the ring
#: (:mod:`keras_backend.distribute.mpi`'s docstring says why)
IALLREDUCE_ALGORITHM = ('OMPI_MCA_coll_libnbc_iallreduce_algorithm', '1')


def name_iallreduce_algorithm():
    """Put :data:`IALLREDUCE_ALGORITHM` in this process's environment unless it names an
    algorithm already; called wherever this package starts MPI (:func:`mpi.module`, the
    rendezvous over MPI), before mpi4py is imported."""
    os.environ.setdefault(*IALLREDUCE_ALGORITHM)


def _mpi_addresses(place, timeout):
    """Every rank's ``host:port`` (rank order), by one allgather over MPI."""
    name_iallreduce_algorithm()
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError('keras_backend.distribute: started by mpirun, this engine takes '
                           'its workers\' addresses over MPI, which needs mpi4py (%s): pip '
                           'install "keras_backend[distribute]" (OpenMPI: apt-get install '
                           'openmpi-bin libopenmpi-dev)' % e)
    comm = MPI.COMM_WORLD
    if comm.Get_size() != place.size or comm.Get_rank() != place.rank:
        raise RuntimeError('keras_backend.distribute: MPI says rank %d of %d, the environment '
                           'rank %d of %d' % (comm.Get_rank(), comm.Get_size(), place.rank,
                                              place.size))
    address = host_address()
    mine = _host_port(address, reserve_port())
    return comm.allgather(mine)


def _slurm_addresses(place, env):
    """Every task's ``host:port`` (rank order) from the node list and the ports."""
    ports = slurm_ports(env, max(place.local_ranks) + 1)
    here = None
    out = []
    for host, local in zip(place.hosts, place.local_ranks):
        if _is_this_host(host):
            if here is None:
                here = host_address(env)
            host = here
        out.append(_host_port(host, ports[local]))
    return out


def rendezvous(workers, place, timeout, env=None):
    """Set what an engine whose workers start one process each needs to find the others,
    when its launcher did not: ``TF_CONFIG`` (``workers == 'tf_config'``) or
    ``KERAS_BACKEND_DISTRIBUTE_COORDINATOR`` (``'coordinator'``), in ``env``.

    Args:
        workers: the engine's ``workers`` column (:data:`keras_backend.engines.TABLE`);
            ``'mpiexec'`` needs nothing.
        place: :func:`placement`'s answer.
        timeout: seconds (kept for the engines' bounds; MPI's allgather has none).
        env: the environment to read and write (default ``os.environ``).

    Returns:
        the list of every worker's ``host:port`` it chose, or None when nothing was
        needed (one process, an MPI engine, or the variable was already set).

    Raises:
        RuntimeError: under mpirun without mpi4py, or MPI disagreeing with the
            environment about the rank.
        ValueError: Slurm variables that do not add up (:func:`placement`,
            :func:`slurm_ports`).

    Example:
        >>> rendezvous('coordinator', placement({}), 60.0, {}) is None   # one process
        True
    """
    env = os.environ if env is None else env
    if place.size <= 1 or workers not in ('tf_config', 'coordinator'):
        return None
    key = 'TF_CONFIG' if workers == 'tf_config' else 'KERAS_BACKEND_DISTRIBUTE_COORDINATOR'
    if env.get(key, '').strip():
        return None
    if place.source == SLURM:
        addresses = _slurm_addresses(place, env)
    elif place.source == MPI:
        addresses = _mpi_addresses(place, timeout)
    else:
        raise RuntimeError('keras_backend.distribute: %s is not set for rank %d of %d; start '
                           'the workers with python -m keras_backend.distribute -n N, mpirun '
                           'or srun' % (key, place.rank, place.size))
    if workers == 'tf_config':
        import json
        env[key] = json.dumps({'cluster': {'worker': addresses},
                               'task': {'type': 'worker', 'index': place.rank}})
    else:
        env[key] = addresses[0]
    return addresses


# -- which collective path a job can take (keras_backend.distribute.init, the launcher) ---

#: the variables that say a process was started by an MPI launcher (OpenMPI's mpiexec, a
#: PMI/PMIx launcher such as Slurm's srun --mpi=pmix)
MPI_VARIABLES = ('OMPI_COMM_WORLD_SIZE', 'PMIX_RANK', 'PMI_RANK')


def under_mpi():
    """True when this process was started as an MPI rank (:data:`MPI_VARIABLES`) or the Ray
    executor gave it a communicator."""
    return any(os.environ.get(v) for v in MPI_VARIABLES) or mpi_communicator() is not None


def available():
    """None when mpi4py can be imported, else why not (a text); MPI itself is not started."""
    from importlib.util import find_spec
    if find_spec('mpi4py') is None:
        return 'mpi4py is not installed (pip install mpi4py)'
    return None


def gpu_present():
    """Whether this machine has a GPU an engine would use: an NVIDIA (``/dev/nvidiactl``)
    or AMD (``/dev/kfd``) device, unless ``CUDA_VISIBLE_DEVICES`` is empty or
    ``JAX_PLATFORMS`` names only the CPU. Read without starting an engine (JAX must not
    start its backends before ``jax.distributed.initialize``)."""
    if os.environ.get('JAX_PLATFORMS', '').strip().lower() == 'cpu':
        return False
    if os.environ.get('CUDA_VISIBLE_DEVICES', None) in ('', '-1'):
        return False
    return os.path.exists('/dev/nvidiactl') or os.path.exists('/dev/kfd')


def own_and_mpi_paths():
    """The ``paths()`` of an engine with collectives of its own beside MPI (TensorFlow,
    JAX), the preferred first: ('mpi', 'engine') on a CPU machine, where MPI's latency on
    one host is a fraction of the engines' own (gRPC ring, gloo) and JAX needs no SPMD
    program; ('engine', 'mpi') where there is a GPU (NCCL)."""
    return ('engine', 'mpi') if gpu_present() else ('mpi', 'engine')
