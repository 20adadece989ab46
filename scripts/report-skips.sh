#!/bin/sh
# After ctest: how many tests were skipped, and why (each skipping test
# prints "skipped: REASON" or "skip: REASON"; ctest keeps the output in
# Testing/Temporary/LastTest.log). Prints nothing when none was skipped.
# usage: report-skips.sh BUILD_DIR
log="$1/Testing/Temporary/LastTest.log"
[ -f "$log" ] || exit 0
reasons=$(grep -h -E '^(skipped|skip): ' "$log" | sort -u)
[ -n "$reasons" ] || exit 0
echo "skipped (not passed), with the reasons the tests gave:"
echo "$reasons" | sed 's/^/  /'
