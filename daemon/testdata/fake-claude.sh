#!/bin/sh
# A stand-in for the claude CLI in the daemon's fallback tests: it reads
# --model from its arguments. The model FAKE_PRIMARY fails as the
# provider says in FAKE_FAILURE: "overloaded" (Anthropic's 529, as
# Claude Code prints it on stdout) or "limited" (a 429 naming a wait of
# FAKE_WAIT seconds); any other model writes a valid report at
# SPECD_REPORT_PATH and prints REPORT_CREATED. Each start appends its
# model to $FAKE_COUNT_DIR/models.
set -eu
model=""
while [ $# -gt 0 ]; do
	case "$1" in
	--model) model="$2"; shift ;;
	--) break ;;
	esac
	shift
done
echo "$model" >> "$FAKE_COUNT_DIR/models"
if [ "$model" = "${FAKE_PRIMARY:-}" ]; then
	case "${FAKE_FAILURE:-overloaded}" in
	overloaded) echo 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' ;;
	limited) echo "API Error: Request rejected (429) · Rate limit exceeded: please try again in ${FAKE_WAIT:-1}s" ;;
	esac
	exit 1
fi
tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: 1\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n# Research Report: %s\n\n## Summary\nWritten by %s.\n\n## Findings\n1. A finding.\n\n## Recommendations\n1. Read it.\n\n## Sources\n- README.md\n' "$SPECD_TOPIC" "$SPECD_TOPIC" "$model" > "$tmp"
mv "$tmp" "$SPECD_REPORT_PATH"
echo "REPORT_CREATED: $SPECD_REPORT_PATH"
