"""Content rules every protocol shares, sans-I/O: what an agent may push and a client may draw
(sanitizing, markdown, URLs, JSON values, fields, component data, bounded numbers,
``ui.update`` operations, the A2UI methods' params). They raise core errors
(``a2ui.core.errors``); each protocol says them in its own words."""
