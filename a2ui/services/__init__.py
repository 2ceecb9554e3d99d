"""The service layer: the one place that changes sessions, components, requests and audit.

Consumers, views, the admin and the Python agent API call these functions; none of them writes
a model directly. Functions named ``a*`` are coroutines; database work runs in one
``database_sync_to_async`` hop per operation, never one per query (per-message operations on
the small pool of ``a2ui.services.dbthreads``).
"""
