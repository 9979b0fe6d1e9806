#!/bin/sh
# Install llmtop: picks the release build for this machine, checks it against
# the release's SHA256SUMS, and puts the binary in /usr/local/bin (as root) or
# ~/.local/bin, with its man page beside it (…/share/man/man1).
#
#   curl -fsSL https://github.com/llmtop/llmtop/releases/latest/download/install.sh | sh
#   sh install.sh [--base-url URL] [--dir DIR] [--version]
#
#   --base-url URL  where SHA256SUMS and the archives are (a release's download
#                   folder, a file server, or a local folder); also LLMTOP_BASE_URL
#   --dir DIR       install the binary into DIR instead; also LLMTOP_INSTALL_DIR
#
# Nothing is installed unless the archive's checksum matches. Needs curl or
# wget (not for a local folder), tar, and sha256sum or shasum.
set -eu

base=${LLMTOP_BASE_URL:-https://github.com/llmtop/llmtop/releases/latest/download}
dir=${LLMTOP_INSTALL_DIR:-}

say() { printf 'llmtop install: %s\n' "$*"; }
die() { printf 'llmtop install: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--base-url) [ $# -ge 2 ] || die "--base-url needs a URL"; base=$2; shift 2 ;;
	--base-url=*) base=${1#*=}; shift ;;
	--dir) [ $# -ge 2 ] || die "--dir needs a folder"; dir=$2; shift 2 ;;
	--dir=*) dir=${1#*=}; shift ;;
	-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
base=${base%/}

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) die "no llmtop build for $(uname -s); build from source: go install github.com/llmtop/llmtop/cmd/llmtop@latest" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no llmtop build for $(uname -m); build from source: go install github.com/llmtop/llmtop/cmd/llmtop@latest" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/llmtop-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() { # URL FILE
	case $1 in
	/* | file://*) cp "${1#file://}" "$2" 2>/dev/null || die "cannot read $1" ;;
	*)
		if command -v curl >/dev/null 2>&1; then
			curl -fsSL --proto '=https,http' -o "$2" "$1" || die "download failed: $1"
		elif command -v wget >/dev/null 2>&1; then
			wget -q -O "$2" "$1" || die "download failed: $1"
		else
			die "needs curl or wget to download $1"
		fi
		;;
	esac
}

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d' ' -f1
	else
		die "needs sha256sum or shasum to check the download"
	fi
}

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS"
# The one archive for this platform: llmtop_VERSION_OS_ARCH.tar.gz.
line=$(grep -E "^[0-9a-f]{64}  llmtop_[A-Za-z0-9.+-]+_${os}_${arch}\.tar\.gz\$" "$tmp/SHA256SUMS" || true)
[ -n "$line" ] || die "$base/SHA256SUMS lists no llmtop build for $os/$arch"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || die "$base/SHA256SUMS lists more than one build for $os/$arch"
want=${line%% *}
archive=${line##* }
fetch "$base/$archive" "$tmp/$archive"
got=$(sha256 "$tmp/$archive")
[ "$got" = "$want" ] || die "checksum mismatch for $archive: SHA256SUMS says $want, the download is $got; nothing installed"
say "$archive: checksum OK"

tar -xzf "$tmp/$archive" -C "$tmp"
src=$tmp/${archive%.tar.gz}
[ -f "$src/llmtop" ] || die "$archive holds no llmtop binary"

if [ -z "$dir" ]; then
	if [ "$(id -u)" = 0 ]; then dir=/usr/local/bin; else dir=$HOME/.local/bin; fi
fi
mkdir -p "$dir" || die "cannot create $dir (pick another with --dir)"
[ -w "$dir" ] || die "cannot write to $dir (run as root, or pick another with --dir)"
# Copy then rename, so a running llmtop is not overwritten in place.
cp "$src/llmtop" "$dir/.llmtop.new" && chmod 755 "$dir/.llmtop.new" && mv -f "$dir/.llmtop.new" "$dir/llmtop" ||
	die "cannot install into $dir"
say "installed $dir/llmtop"

man=$(dirname "$dir")/share/man/man1
if [ -f "$src/llmtop.1" ] && mkdir -p "$man" 2>/dev/null && cp "$src/llmtop.1" "$man/llmtop.1" 2>/dev/null; then
	say "man page: $man/llmtop.1"
fi

if ! "$dir/llmtop" --version >"$tmp/version" 2>&1; then
	say "but it does not start here:"
	sed 's/^/  /' "$tmp/version" >&2
	exit 1
fi
say "$(cat "$tmp/version")"
case :$PATH: in
*:"$dir":*) ;;
*) say "$dir is not on your PATH: add it (export PATH=\"$dir:\$PATH\") or run $dir/llmtop" ;;
esac
say "shell completion: llmtop completion bash|zsh|fish (see llmtop completion --help)"
