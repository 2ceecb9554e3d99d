"""Infrastructure: what every domain package runs on, and that knows no domain.

Redis (``redisurl``, ``redisline``, ``redisstate``, ``shared``), the database threads and
connections (``dbthreads``, ``dbconn``), hand-written SQL (``sql``), caps, background jobs
(``jobs``), memory after a mass close (``memory``), metrics (``prom``), tracing, outages,
health checks and the channel layer's group names (``groups``). Nothing here imports a domain
package (sessions, requests, runs, surfaces, consent, compliance) or the push pipeline.
"""
