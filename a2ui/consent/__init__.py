"""Consent: which consents a session needs, a person's choices and their revocation."""
