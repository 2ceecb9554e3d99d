"""A TCP relay that can be cut: a server's way to PostgreSQL made unreachable and back, without
touching the PostgreSQL every test shares.

``cut()`` closes every relayed connection (the server sees its connections end) and refuses new
ones (accepted and closed at once, as a server that is not there); ``restore()`` relays again.
"""

import contextlib
import socket
import threading


class CuttableRelay:
    def __init__(self, host, port):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.sockets = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name="tcpcut-accept").start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self.lock:
                self.sockets |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source, sink):
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self):
        self.open = False
        with self.lock:
            sockets, self.sockets = self.sockets, set()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()

    def restore(self):
        self.open = True

    def close(self):
        self.cut()
        self.listener.close()
