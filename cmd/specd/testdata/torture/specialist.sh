#!/bin/sh
# Torture-test specialist: logs its start and end, sleeps 0–200 ms, writes a
# deterministic contract-valid report with temp file + rename.
echo "start $SPECD_SPEC_DIR $SPECD_TOPIC_INDEX" >> "$TORTURE_LOG"
sleep "$(awk -v s="$$" 'BEGIN { srand(s); printf "%.3f", rand() * 0.2 }')"
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
cat > "$tmp" <<REPORT
---
report_type: research
topic: "$SPECD_TOPIC"
findings_count: 1
recommendations_count: 0
created_date: 2026-11-22
status: complete
---

## Summary
Topic $SPECD_TOPIC_INDEX of $SPECD_TOPIC_COUNT.

## Findings
1. A finding about $SPECD_TOPIC.

## Sources
- https://go.dev/doc
REPORT
mv "$tmp" "$SPECD_REPORT_PATH"
echo "done $SPECD_SPEC_DIR $SPECD_TOPIC_INDEX" >> "$TORTURE_LOG"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
