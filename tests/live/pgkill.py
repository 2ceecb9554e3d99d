"""Ending the PostgreSQL backends of one server process (pg_terminate_backend), as a restart or
a failover would for that process, and leaving every other connection to the test database
(the test process's own among them) alone."""

import os

import psycopg
from django.db import connection


def local_ports(pid):
    """The local TCP ports of process ``pid``'s sockets (its database connections among them)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}") as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def terminate_server_backends(server_pid):
    """Terminate every backend of the test database that serves process ``server_pid``."""
    settings = connection.settings_dict
    ports = local_ports(server_pid)
    with psycopg.connect(host=settings.get("HOST") or "127.0.0.1",
                         port=settings.get("PORT") or 5432, user=settings.get("USER") or
                         "postgres", password=settings.get("PASSWORD") or None,
                         dbname=settings["NAME"], autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
            "current_database() AND client_port = ANY(%s) AND pid <> pg_backend_pid()",
            (ports,))  # a port the server freed since it was listed may be this connection's
        return len(rows.fetchall())
