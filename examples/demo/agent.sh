#!/bin/sh
# A scripted stand-in for a coding agent, so the demo runs without an API key.
# ralph runs it once per iteration, like any agent CLI: the prompt arrives on
# stdin, RALPH_HAT says which hat it wears, and it publishes events with
# `ralph emit` (through $RALPH_BIN) or with <event> tags in what it prints.
prompt=$(cat)

case "$RALPH_HAT" in
writer)
	# The first draft misses the point; the reviewer sends it back.
	if [ -f greeting.txt ]; then
		echo "Fixing greeting.txt as the reviewer asked."
		echo "Hello, world!" > greeting.txt
	else
		echo "Writing greeting.txt."
		echo "Hello!" > greeting.txt
	fi
	"$RALPH_BIN" emit write.done "greeting.txt says: $(cat greeting.txt)"
	;;
reviewer)
	if grep -q "world" greeting.txt; then
		echo 'The greeting greets the world. <event topic="LOOP_COMPLETE">greeting.txt is written and reviewed</event>'
	else
		echo '<event topic="write.task">greeting.txt must greet the world</event>'
	fi
	;;
*)
	# The coordinator: start the work, or, in the confirmation iteration
	# that checks the reviewer's claim afresh, confirm it.
	if echo "$prompt" | grep -qi "claimed"; then
		if grep -q "world" greeting.txt 2>/dev/null; then
			echo 'Verified greeting.txt. <event topic="LOOP_COMPLETE">greeting written and reviewed</event>'
			exit 0
		fi
	fi
	echo 'Handing the writing to the writer. <event topic="write.task">write the greeting</event>'
	;;
esac
