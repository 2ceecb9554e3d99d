"""A2UI v0.9 surfaces of a session: validate, store, stream, and route actions back.

One entry point per direction, shared by every adapter (agent WebSocket, REST, Python API,
the JSON-RPC user socket, /ws/v09, SSE):

* ``apush(agent_id, session_id, messages)``: an agent's batch of server messages. Validated as a
  whole by ``a2ui.v09.validate_batch`` against the stored states, with the server policy (the
  agent's registered name and icon in ``theme``, http(s)-only URLs, ``sanitize_text`` on Text)
  and the client's declared catalogs. Stored in one transaction that also advances the
  session's ``surface_seq`` by one per message, then sent once to the session group. An invalid
  batch changes nothing and raises :class:`SurfaceValidationError`.
* ``aclient_messages(session_id, messages, data_model=None)``: a person's ``action`` / ``error``
  messages, validated and sent to the agent's sockets as the ``a2ui.v09`` notification, with the
  data model of ``sendDataModel`` surfaces attached.
* ``aload`` / ``snapshot_messages``: a client's starting point, consistent with ``surface_seq``.

Data-model strings are not HTML-sanitized: they are values (form fields, labels bound with
``{"path"}``) and entities would show up literally in inputs. Like every other string in a
message they lose control characters and lone surrogates (which PostgreSQL's jsonb refuses);
renderers must treat bound strings as text (ours builds the DOM from text). Bidirectional
controls are removed from them too (they are displayed), and every value follows the JSON value
policy (``a2ui.core.content.jsonvalue``: I-JSON integers, finite numbers, no NUL in keys) even when
it did not come through a socket or REST parser (the in-process Python API).

Layout: ``catalogs`` (the server's registry, a client's declared catalogs and capabilities),
``store`` (an agent's batch: clean, validate, store, push; ``load``), ``routing`` (a person's
messages to the agent, attaching a v0.9 client), ``cleaning`` (errors and the string cleaner);
the per-socket :class:`Tracker` is sans-I/O in ``a2ui.core.surfaces.tracker``. Every public name is
re-exported here: callers use ``surfaces.X``.
"""

from a2ui.core.surfaces.tracker import Tracker, snapshot_messages
from a2ui.surfaces.catalogs import (
    build_registry,
    catalog_registry,
    client_catalog_ids,
    declares_a2ui,
    load_catalog,
    parse_client_capabilities,
)
from a2ui.surfaces.cleaning import (
    MAX_JSON_DEPTH,
    SurfaceValidationError,
    TooDeep,
    clean_json,
)
from a2ui.surfaces.routing import (
    MAX_CLIENT_BATCH,
    MAX_DATA_MODEL_DEPTH,
    acheck_stream_session,
    aremember,
    check_stream_session,
)
from a2ui.surfaces.store import (
    MAX_BATCH,
    MAX_SURFACE_ID,
    aload,
    batch_data,
    load,
    store_batch,
    surfaces_event,
    tracked,
)

__all__ = [
    "batch_data",
    "MAX_BATCH",
    "MAX_CLIENT_BATCH",
    "MAX_DATA_MODEL_DEPTH",
    "MAX_JSON_DEPTH",
    "MAX_SURFACE_ID",
    "SurfaceValidationError",
    "TooDeep",
    "Tracker",
    "acheck_stream_session",
    "aload",
    "aremember",
    "build_registry",
    "catalog_registry",
    "check_stream_session",
    "clean_json",
    "client_catalog_ids",
    "declares_a2ui",
    "load",
    "load_catalog",
    "parse_client_capabilities",
    "snapshot_messages",
    "store_batch",
    "surfaces_event",
    "tracked",
]
