"""REST adapters (DRF): stream tokens for users, message endpoints for agents."""
