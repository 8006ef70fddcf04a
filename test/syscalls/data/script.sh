#!/bin/sh
# Used by exec.c: prints its arguments and an environment variable.
echo "script: $# args: $*"
echo "MOAT_X=$MOAT_X"
exit 3
