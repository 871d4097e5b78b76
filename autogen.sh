#!/bin/sh
# Regenerate the autotools build files (configure, Makefile.in, ...).
# Needs autoconf, automake and libtool (Debian: autoconf automake libtool).
set -e
cd "$(dirname "$0")"
mkdir -p m4
exec autoreconf -fi
