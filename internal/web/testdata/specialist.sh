#!/bin/sh
# The specialist of the web view's browser test (browser_test.go), by
# topic index: 0 writes a hostile report, 1 a structured result with an
# injected finding (quarantined by the result gate), 2 waits until the
# test writes a line to the FIFO $WEB_TEST_RELEASE, then writes a plain
# report. Reports are written to a temp name and renamed.
set -eu
report() {
	sed -e "s|IMAGE_HOST|$WEB_TEST_IMAGE_HOST|g" -e "s|TOPIC|$SPECD_TOPIC|" "$WEB_TEST_DATA/$1" > "$SPECD_REPORT_PATH.tmp"
	mv "$SPECD_REPORT_PATH.tmp" "$SPECD_REPORT_PATH"
	echo "REPORT_CREATED: $SPECD_REPORT_PATH"
}
case "$SPECD_TOPIC_INDEX" in
0) report hostile.md ;;
1)
	mkdir -p "$(dirname "$SPECD_RESULT_PATH")"
	cp "$WEB_TEST_DATA/result.json" "$SPECD_RESULT_PATH.tmp"
	mv "$SPECD_RESULT_PATH.tmp" "$SPECD_RESULT_PATH"
	;;
*)
	echo "waiting for the test to release this topic"
	read -r line < "$WEB_TEST_RELEASE"
	echo "released: $line"
	echo "a line on stderr" >&2
	report plain.md
	;;
esac
