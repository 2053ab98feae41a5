#!/bin/sh
# help.sh — what help2man runs in place of a brisk tool (cmake/install.cmake links it under the tool's name):
# the tool's own --help, with its usage block in the shape help2man reads as a SYNOPSIS ("Usage: tool ..."
# then "   or: tool ..." per form, GNU style): the tools print "usage: tool ..." with the other forms indented
# below it and long forms wrapped, which help2man would fill into one paragraph. After it, each line indented
# by two (brisk-perf's "  TAP: ...", "  STACK: ...") starts a paragraph of its own; the rest passes unchanged.
tool=$(basename "$0")
"$BRISK_MAN_TOOL" "$@" 2>&1 | awk -v tool="$tool" '
function flush() { if (line != "") print line; line = "" }
NR == 1 && /^usage: / { line = "Usage: " substr($0, 8); usage = 1; next }
usage && $1 == tool { flush(); sub(/^ +/, ""); line = "   or: " $0; next }
usage && /^         +[^ ]/ { sub(/^ +/, ""); line = line " " $0; next }
usage { flush(); usage = 0 }
/^  [^ ]/ { print "" }
{ print }
END { flush() }'
