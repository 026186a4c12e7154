"""Parses an OpenMetrics scrape (stdin) with the Prometheus client library's
own strict parser and prints it as JSON: {family: {"type", "samples": [[name,
labels, value]]}}. A scrape the parser rejects exits non-zero."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

families = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = {
        "type": family.type,
        "samples": [[s.name, s.labels, s.value] for s in family.samples],
    }
json.dump(families, sys.stdout)
