"""Thin WebSocket adapters: parse with a2ui.protocol, act through a2ui.services, send."""
