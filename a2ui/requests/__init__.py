"""Pending requests: what an agent asks a person (input, confirm), their answers and who
waits for them."""
