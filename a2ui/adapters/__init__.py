"""Registry entries of the protocols this package ships (``A2UI['ADAPTERS']``).

Each module exposes ``ADAPTER`` (``a2ui.core.adapters.Adapter``). A protocol shipped as its own
package (``a2ui.mcp``, ...) registers the same way from its own module.
"""
