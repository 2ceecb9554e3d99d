"""Sessions: their lifecycle, admission, the clients attached, agents' presence and routing,
revocation and the per-session counters."""
