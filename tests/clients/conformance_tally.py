"""Turn the conformance suite's summary into ok / not ok lines.

usage: conformance_tally.py OUTPUT_LOG BASELINE_YML SUITE_EXIT_CODE
A passing scenario is `ok`; a failing one is `ok … (expected failure)` when the baseline lists
it and `not ok` otherwise. The suite's own exit code is one more check: it is non-zero on an
unexpected failure and on a stale baseline entry (a listed scenario that now passes).
"""

import re
import sys

log, baseline_path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
baseline = set()
in_server = False
for line in open(baseline_path):
    line = line.split("#", 1)[0].rstrip()
    if not line:
        continue
    if not line.startswith(" "):
        in_server = line.strip() == "server:"
    elif in_server and line.strip().startswith("- "):
        baseline.add(line.strip()[2:].strip())

failed = 0
seen = 0
text = open(log, encoding="utf-8", errors="replace").read()
summary = text.split("=== SUMMARY ===", 1)[-1] if "=== SUMMARY ===" in text else ""
for m in re.finditer(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", summary, re.M):
    mark, name = m.group(1), m.group(2)
    seen += 1
    if mark == "✓":
        print(f"ok conformance: {name}" + ("  (listed in the baseline: stale entry)" if name in baseline else ""))
    elif name in baseline:
        print(f"ok conformance: {name} (expected failure)")
    else:
        failed += 1
        print(f"not ok conformance: {name} - unexpected failure (see {log})")
if seen == 0:
    print(f"not ok conformance: summary - no scenario summary found in {log}")
elif rc != 0:
    print(f"not ok conformance: suite exit code {rc} (unexpected failure or stale baseline entry; see {log})")
else:
    print("ok conformance: suite exit code 0 with the baseline")
