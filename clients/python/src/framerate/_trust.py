"""Who may answer on the daemon's socket: root, the ``framerated`` service user,
or this process's own user. Anyone else may be a local user who took the socket
path first and is impersonating the daemon."""

from __future__ import annotations

import os
import pwd
import socket
import struct
from typing import Optional, Set

#: The service user's name (the systemd unit's ``User=``).
SERVICE_USER = "framerated"

# struct ucred { pid_t pid; uid_t uid; gid_t gid; }
_UCRED = struct.Struct("=iII")


def service_uid(name: str = SERVICE_USER) -> Optional[int]:
    """The uid of user ``name`` (``getpwnam``), or ``None`` when there is no such user."""
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def trusted_uids(own_uid: Optional[int] = None, service: Optional[int] = None, *, resolve_service: bool = True) -> Set[int]:
    """The uids a daemon may run as: 0, ``own_uid`` (default: the effective
    uid) and the service user's (looked up unless ``resolve_service`` is false)."""
    uids = {0, os.geteuid() if own_uid is None else own_uid}
    if service is None and resolve_service:
        service = service_uid()
    if service is not None:
        uids.add(service)
    return uids


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of the Unix socket ``sock`` (``SO_PEERCRED``)."""
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    if len(data) != _UCRED.size:
        raise OSError(f"SO_PEERCRED returned {len(data)} bytes, expected {_UCRED.size}")
    _pid, uid, _gid = _UCRED.unpack(data)
    return int(uid)
