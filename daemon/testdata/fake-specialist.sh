#!/bin/sh
# A scripted specialist for the daemon tests. Its behaviour is the first word
# of SPECD_TOPIC: ok, missing, invalid, crash, taskerror, hang, orphan, dir,
# ratelimit (opencode's 429 error once, then ok), auth (opencode's 401 error),
# slow (ok after FAKE_SLOW seconds, default 2), stall (prints a line on
# stdout and stderr, then nothing while a child sleeps), limited (a rate
# limit naming a wait of FAKE_WAIT seconds, default 1, the first
# FAKE_LIMITS times, default 1, then ok).
# It follows the specialist contract: SPECD_* variables in, report at
# SPECD_REPORT_PATH (temp + rename), the signals of docs/contract.md#specialists on stdout.
set -eu
mode=${FAKE_MODE:-${SPECD_TOPIC%%:*}}
count_file=${FAKE_COUNT_DIR:-}/invocations
[ -n "${FAKE_COUNT_DIR:-}" ] && echo "$SPECD_TOPIC_INDEX" >> "$count_file" && echo "$$" >> "$FAKE_COUNT_DIR/pids"

write_report() { # $1 = findings count written, $2 = findings_count claimed
	tmp="$(dirname "$SPECD_REPORT_PATH")/.tmp.$$"
	{
		printf -- '---\nreport_type: research\ntopic: "%s"\nfindings_count: %s\nrecommendations_count: 1\ncreated_date: 2026-11-22\nstatus: complete\n---\n\n' "$SPECD_TOPIC" "$2"
		printf '# Research Report: %s\n\n## Summary\nScripted report for topic %s of %s.\n\n## Findings\n' "$SPECD_TOPIC" "$SPECD_TOPIC_INDEX" "$SPECD_TOPIC_COUNT"
		i=1
		while [ "$i" -le "$1" ]; do printf '%s. Finding number %s about the topic.\n' "$i" "$i"; i=$((i+1)); done
		printf '\n## Recommendations\n1. Read the findings.\n\n## Sources\n- [README.md](../../../../README.md)\n'
	} > "$tmp"
	mv "$tmp" "$SPECD_REPORT_PATH"
}

case "$mode" in
ok)
	write_report 2 2
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
slow)
	sleep "${FAKE_SLOW:-2}"
	write_report 2 2
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
missing)
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
invalid)
	write_report 1 3
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
crash)
	echo "about to fail" >&2
	exit 3 ;;
taskerror)
	echo 'ERROR_CONTEXT: {"error_type":"validation_error","message":"Missing report_path field","details":{"required_fields":["report_path"]}}'
	echo "TASK_ERROR: validation_error - Missing report_path field in input contract"
	exit 1 ;;
hang)
	sleep 600 ;;
stall)
	echo "working on $SPECD_TOPIC"
	echo "fetching sources" >&2
	sleep 600 ;;
ratelimit)
	marker="$FAKE_COUNT_DIR/ratelimited.$SPECD_TOPIC_INDEX"
	if [ ! -e "$marker" ]; then
		: > "$marker"
		printf '\033[91m\033[1mError: \033[0mRate limit exceeded: too many requests\n' >&2
		exit 1
	fi
	write_report 2 2
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
limited)
	f="$FAKE_COUNT_DIR/limited.$SPECD_TOPIC_INDEX"
	echo x >> "$f"
	if [ "$(wc -l < "$f")" -le "${FAKE_LIMITS:-1}" ]; then
		printf '\033[91m\033[1mError: \033[0mRate limit exceeded: too many requests. Please try again in %ss.\n' "${FAKE_WAIT:-1}" >&2
		exit 1
	fi
	write_report 2 2
	echo "REPORT_CREATED: $SPECD_REPORT_PATH" ;;
auth)
	printf '\033[91m\033[1mError: \033[0mInvalid API key provided\n' >&2
	exit 1 ;;
orphan)
	# A grandchild in its own session that ignores SIGTERM: the topic's
	# subreaper must still end it (no group kill reaches it).
	setsid sh -c 'trap "" TERM; echo $$ > "$FAKE_COUNT_DIR/grandchild.pid"; while :; do sleep 1; done' &
	sleep 600 ;;
*)
	echo "unknown mode $mode" >&2
	exit 2 ;;
esac
