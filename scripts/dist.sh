#!/usr/bin/env bash
# dist.sh [OUTDIR]: the release builds (make dist).
#
#   linux/amd64, linux/arm64   cgo, NVML loaded at run time, start on glibc ≥ 2.17
#   darwin/amd64, darwin/arm64 pure Go: no NVML on macOS (--dcgm URL works)
#
# For each: OUTDIR/llmtop_VERSION_OS_ARCH (the binary, one file to copy over
# ssh) and OUTDIR/llmtop_VERSION_OS_ARCH.tar.gz (the binary, its man page,
# shell completions, README), all listed in OUTDIR/SHA256SUMS; and
# OUTDIR/install.sh. The version, commit and commit date are stamped in.
#
# The same commit gives the same bytes from any directory and any build
# cache: -trimpath, no Go build ID, the commit's date instead of the clock,
# tar and gzip without times or owners, and the glibc floor's compiler
# wrapper (scripts/dist/glibc-floor.sh) in place of flags holding paths.
# scripts/dist-test.sh repro builds twice and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
GO=${GO:-go}
FLOOR=${GLIBC_FLOOR:-2.17}
export LC_ALL=C TZ=UTC

epoch=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH=$epoch
date=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse HEAD)
dirty=
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=-dirty
if [ -z "${VERSION:-}" ]; then
	if tag=$(git describe --tags --exact-match 2>/dev/null); then
		VERSION=$tag$dirty
	else # a Go pseudo-version, as `go install …@COMMIT` would name it
		VERSION=v0.0.0-$(date -u -d "@$epoch" +%Y%m%d%H%M%S)-${commit:0:12}$dirty
	fi
fi

# The cross compiler, its C library and qemu come from Debian (make dist-deps).
need() { command -v "$1" >/dev/null || { echo "dist: $1 missing: run make dist-deps (apt-get install $2)" >&2; exit 1; }; }
need gcc gcc
need aarch64-linux-gnu-gcc "gcc-aarch64-linux-gnu libc6-dev-arm64-cross"

work=build/dist
rm -rf "$out" "$work"
mkdir -p "$out" "$work"

# the floor compiler per Linux architecture
floor_cc() { # ARCH → path of the wrapper
	local arch=$1 cc libdir
	case $arch in
	amd64) cc=gcc libdir=$(dirname "$(gcc -print-file-name=libc.so.6)") ;;
	arm64) cc=aarch64-linux-gnu-gcc libdir=$(dirname "$(aarch64-linux-gnu-gcc -print-file-name=libc.so.6)") ;;
	esac
	[ -f "$libdir/libc.so.6" ] || libdir=$(dirname "$(readlink -f "$("$cc" -print-file-name=libc.so)")")
	CC_FLOOR=$cc scripts/dist/glibc-floor.sh prepare "$libdir" "$FLOOR" "$work/floor-$arch" >&2
	echo "$PWD/$work/floor-$arch/cc"
}

build() { # OS ARCH
	local os=$1 arch=$2 name=llmtop_${VERSION}_$1_$2
	local ldflags="-s -w -buildid= -X main.version=$VERSION -X main.commit=$commit -X main.buildDate=$date"
	echo "dist: building $name" >&2
	if [ "$os" = linux ]; then
		local cc
		cc=$(floor_cc "$arch")
		CGO_ENABLED=1 CC=$cc CGO_CFLAGS="-O2 -Wno-deprecated-declarations" CGO_CPPFLAGS= CGO_LDFLAGS="-O2" \
			GOOS=$os GOARCH=$arch GOAMD64=v1 GOARM64=v8.0 GOFLAGS= \
			"$GO" build -trimpath -buildvcs=false -tags netgo,osusergo \
			-ldflags "$ldflags -X main.glibcFloor=$FLOOR" -o "$out/$name" ./cmd/llmtop
	else
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOAMD64=v1 GOARM64=v8.0 GOFLAGS= \
			"$GO" build -trimpath -buildvcs=false -tags netgo,osusergo \
			-ldflags "$ldflags" -o "$out/$name" ./cmd/llmtop
	fi
}

targets=${DIST_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
for t in $targets; do
	build "${t%/*}" "${t#*/}"
done
linux=
for t in $targets; do
	if [ "${t%/*}" = linux ]; then linux="$linux $out/llmtop_${VERSION}_${t/\//_}"; fi
done
# shellcheck disable=SC2086
[ -z "$linux" ] || scripts/dist/check-glibc.sh "$FLOOR" $linux

# man page and completions, written by a build this machine runs
host=$out/llmtop_${VERSION}_linux_$("$GO" env GOHOSTARCH)
[ -x "$host" ] || { echo "dist: no build for this machine ($host) to write the man page with" >&2; exit 1; }
docs=$work/docs
mkdir -p "$docs/completions"
"$host" man >"$docs/llmtop.1"
"$host" completion bash >"$docs/completions/llmtop.bash"
"$host" completion zsh >"$docs/completions/_llmtop"
"$host" completion fish >"$docs/completions/llmtop.fish"

for t in $targets; do
	name=llmtop_${VERSION}_${t/\//_}
	stage=$work/$name
	mkdir -p "$stage"
	cp "$out/$name" "$stage/llmtop"
	cp -r "$docs/llmtop.1" "$docs/completions" "$stage/"
	cp README.md "$stage/"
	chmod -R u=rwX,go=rX "$stage"
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
done
cp scripts/install.sh "$out/install.sh"
(cd "$out" && sha256sum llmtop_* >SHA256SUMS)
echo "dist: $VERSION in $out/:"
(cd "$out" && ls -l --time-style=+ llmtop_* SHA256SUMS install.sh | awk '{printf "  %10d  %s\n", $5, $NF}')
