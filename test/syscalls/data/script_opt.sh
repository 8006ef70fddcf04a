#!/bin/sh -e
echo "opt-script $0"
exit 4
