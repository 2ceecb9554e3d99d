"""What the Prometheus metrics' tests share (``a2ui.infra.prom``): a scrape read as samples.
The ``metrics_on`` fixture (tests/conftest.py) turns the metrics on for one test."""

from prometheus_client.parser import text_string_to_metric_families

from a2ui.infra import prom


def samples(body):
    """``{(name, sorted labels tuple): value}`` of a scrape."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode())
            for s in family.samples}


def scrape():
    """This process's scrape (the tallies flushed first), as :func:`samples`."""
    return samples(prom.exposition()[1])


def value(got, name, **labels):
    return got.get((name, tuple(sorted(labels.items()))), 0)
