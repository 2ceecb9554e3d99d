"""Server-sent events (the WHATWG event-stream format) from bytes, with caps. Sans-I/O.

``Decoder.feed(chunk)`` returns the events completed by the chunk, each ``(event, data, id)``;
a line longer than ``max_event`` bytes, or an event whose data goes beyond it, is
:class:`TooLarge` (the stream cannot be trusted any further). Comments (``:`` lines: keep-
alives) and ``retry`` fields are read and dropped.
"""


class TooLarge(Exception):
    pass


class Decoder:
    def __init__(self, max_event):
        self.max_event = max_event
        self.buffer = b""
        self.data = []
        self.size = 0
        self.event = ""
        self.last_id = ""
        self.skip_lf = False

    def feed(self, chunk):
        out = []
        if self.skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self.skip_lf = False
        buffer = self.buffer + chunk if self.buffer else chunk
        start = 0
        while True:
            cr, lf = buffer.find(b"\r", start), buffer.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                break
            end = min(ends)
            line = buffer[start:end]
            if buffer[end:end + 1] == b"\r":
                if end + 1 < len(buffer):
                    start = end + 2 if buffer[end + 1:end + 2] == b"\n" else end + 1
                else:
                    start = end + 1
                    self.skip_lf = True
            else:
                start = end + 1
            event = self._line(line)
            if event is not None:
                out.append(event)
        self.buffer = buffer[start:]
        if len(self.buffer) > self.max_event:
            raise TooLarge(f"an event stream line of more than {self.max_event} bytes")
        return out

    def _line(self, line):
        if not line:
            if not self.data and not self.event:
                return None
            data = "\n".join(self.data)
            event = (self.event or "message", data, self.last_id)
            self.data, self.size, self.event = [], 0, ""
            return event
        if line.startswith(b":"):
            return None
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        text = value.decode("utf-8", "replace")
        if name == b"data":
            self.size += len(value) + 1
            if self.size > self.max_event:
                raise TooLarge(f"an event of more than {self.max_event} bytes")
            self.data.append(text)
        elif name == b"event":
            self.event = text[:200]
        elif name == b"id" and "\x00" not in text:
            self.last_id = text[:200]
        return None

    def close(self):
        """The event left unterminated when the stream ends is dropped (as the spec says)."""
        self.buffer, self.data, self.size, self.event = b"", [], 0, ""
