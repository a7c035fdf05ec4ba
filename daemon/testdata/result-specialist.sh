#!/bin/sh
# A scripted read-only specialist for the structured-result tests
# (docs/contract.md#structured-results): it never writes the report. Its behaviour is the
# first word of SPECD_TOPIC; RESULTS_TESTDATA names results/testdata.
#   json       WebResearcherResult JSON (one uncited, one injected claim) at SPECD_RESULT_PATH (temp + rename)
#   envelope   research envelope on stdout, answering this run's correlation id
#   noresults  no-results research envelope at the .md result path
#   crossed    research envelope on stdout naming another request's correlation id
#   injectedid research envelope whose correlation_id is markup
#   decline    TASK_ERROR: declined - …, exit 1
#   broken     JSON that breaks the WebResearcherResult schema, on stdout
set -eu
mode=${SPECD_TOPIC%%:*}
[ -n "${FAKE_COUNT_DIR:-}" ] && echo "$SPECD_TOPIC_INDEX" >> "$FAKE_COUNT_DIR/invocations"
md=${SPECD_RESULT_PATH%.json}.md
case "$mode" in
json)
	cp "$RESULTS_TESTDATA/web_research.json" "$SPECD_RESULT_PATH.tmp"
	mv "$SPECD_RESULT_PATH.tmp" "$SPECD_RESULT_PATH" ;;
envelope)
	sed "s/^correlation_id: .*/correlation_id: $SPECD_CORRELATION_ID/" "$RESULTS_TESTDATA/research_envelope.md" ;;
noresults)
	sed "s/^correlation_id: .*/correlation_id: $SPECD_CORRELATION_ID/" "$RESULTS_TESTDATA/research_no_results.md" > "$md.tmp"
	mv "$md.tmp" "$md" ;;
crossed)
	sed "s/^correlation_id: .*/correlation_id: specd_999_000000000000/" "$RESULTS_TESTDATA/research_envelope.md" ;;
injectedid)
	sed "s/^correlation_id: .*/correlation_id: '<script>alert(1)<\/script>'/" "$RESULTS_TESTDATA/research_envelope.md" ;;
decline)
	echo "TASK_ERROR: declined - the dispatch needs write access; this specialist is read-only"
	exit 1 ;;
broken)
	echo '{"findings": [{"claim": "x", "source_url": "https://go.dev", "confidence": "sure"}], "sources": [], "search_queries": [], "notes": ""}' ;;
*)
	echo "unknown mode $mode" >&2
	exit 2 ;;
esac
