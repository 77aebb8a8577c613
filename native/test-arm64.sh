#!/usr/bin/env bash
# Runs the committed linux-arm64 binary under qemu-user and the linux-x64-musl one under musl's loader,
# and checks both agree with the linux-x64 build (same fingerprint, same estimates). Needs
# gcc-aarch64-linux-gnu, qemu-user and musl-tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(dirname "$here")/native-bin"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

gcc -std=c99 -O2 -I"$here" -o "$tmp/selftest-x64" "$here/selftest.c" -ldl
expected="$("$tmp/selftest-x64" "$bin/linux-x64/libdiagcms.so")"
echo "linux-x64:        $(echo "$expected" | tr '\n' ' ')"

aarch64-linux-gnu-gcc -std=c99 -O2 -I"$here" -o "$tmp/selftest-arm64" "$here/selftest.c" -ldl
got="$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$tmp/selftest-arm64" "$bin/linux-arm64/libdiagcms.so")"
echo "linux-arm64:      $(echo "$got" | tr '\n' ' ')"
[[ "$got" == "$expected" ]] || { echo "linux-arm64 differs from linux-x64" >&2; exit 1; }

musl-gcc -std=c99 -O2 -I"$here" -o "$tmp/selftest-musl" "$here/selftest.c"
got="$("$tmp/selftest-musl" "$bin/linux-x64-musl/libdiagcms.so")"
echo "linux-x64-musl:   $(echo "$got" | tr '\n' ' ')"
[[ "$got" == "$expected" ]] || { echo "linux-x64-musl differs from linux-x64" >&2; exit 1; }
echo "OK"
