"""The media type of A2UI JSON (sans-I/O).

A2UI v0.9.1 standardized ``application/a2ui+json`` (RFC 6839 structured syntax suffix) for a
payload of A2UI messages; drafts of the v0.9 extension specification said
``application/json+a2ui``. We label what we send with the official type and accept both from
clients and agents.
"""

#: What every A2UI payload we label is labelled with.
MIME_TYPE = "application/a2ui+json"
#: The older spelling of v0.9 drafts: accepted, never sent.
LEGACY_MIME_TYPES = ("application/json+a2ui",)
ACCEPTED_MIME_TYPES = (MIME_TYPE, *LEGACY_MIME_TYPES)

