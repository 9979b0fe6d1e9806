#!/usr/bin/env bash
# dist-test.sh: what `make dist` made, tested as a user would meet it.
#
#   dist-test.sh [DISTDIR]   (make test-dist)
#     - SHA256SUMS matches every file;
#     - the glibc floor: each Linux binary needs nothing above GLIBC_2.17 (and
#       the check fails on a binary linked the ordinary way);
#     - each Linux binary runs, arm64 under qemu-user: --version, version
#       --json, and snapshot --json against `llmtop sim`, once without
#       libnvidia-ml.so.1 (the GPU section says why it is empty) and once with
#       a stand-in libnvidia-ml.so.1 (scripts/dist/fakenvml.c): its GPU shows
#       up, so the release build loads NVML at run time and calls into it;
#     - the same on glibc 2.31 (Debian 11's libc6, fetched with apt-get into a
#       folder), where a binary linked the ordinary way refuses to start;
#     - the darwin builds are Mach-O files without cgo;
#     - the install script, against a local file server: installs into
#       ~/.local/bin (as a user), /usr/local/bin (as root, on a private tmpfs)
#       or --dir, says where, and refuses an archive whose checksum does not
#       match, installing nothing.
#   dist-test.sh repro
#     - builds the release again, from a clone of HEAD in another folder with
#       an empty build cache, and compares the bytes with make dist's (or
#       builds two clones when dist/ is not of HEAD as committed).
#   dist-test.sh goinstall
#     - `go install github.com/llmtop/llmtop/cmd/llmtop@latest` with an empty
#       module cache, HEAD served as v0.0.1 by a module proxy in a folder
#       (the other modules come from the usual proxy): once with gcc (the
#       build reads NVML) and once with no C compiler on PATH (it builds
#       without cgo and says why there are no GPU rows).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
FLOOR=${GLIBC_FLOOR:-2.17}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/llmtop-dist-test.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	chmod -R u+w "$tmp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

repro() {
	local rev builds=()
	rev=$(git rev-parse HEAD)
	# make dist's own output counts as the first build when it is of this
	# commit with no local changes; a clone in another folder with an empty
	# build cache is the second (or both, when dist/ is not usable).
	local want
	want=$(git describe --tags --exact-match 2>/dev/null || echo "${rev:0:12}")
	if [ -f dist/SHA256SUMS ] && [ -z "$(git status --porcelain --untracked-files=no)" ] &&
		grep -q -- "${want}_linux_amd64\$" dist/SHA256SUMS; then
		builds=("$root/dist")
		echo "=== first build: make dist's output in $root/dist"
	fi
	for side in a b; do
		[ ${#builds[@]} -lt 2 ] || break
		git clone -q --no-hardlinks "$root" "$tmp/$side/llmtop-$side"
		git -C "$tmp/$side/llmtop-$side" checkout -q "$rev"
		echo "=== dist from $tmp/$side/llmtop-$side (empty build cache)"
		(cd "$tmp/$side/llmtop-$side" && GOCACHE=$tmp/$side/gocache ./scripts/dist.sh dist >"$tmp/$side/log" 2>&1) ||
			{ tail -30 "$tmp/$side/log"; bad "make dist in clone $side failed"; return; }
		builds+=("$tmp/$side/llmtop-$side/dist")
	done
	if cmp -s "${builds[0]}/SHA256SUMS" "${builds[1]}/SHA256SUMS"; then
		ok "two builds of $rev from different folders and build caches are the same bytes:"
		sed 's/^/  /' "${builds[0]}/SHA256SUMS"
	else
		bad "two builds of $rev differ:"
		diff "${builds[0]}/SHA256SUMS" "${builds[1]}/SHA256SUMS" || true
	fi
}

goinstall() {
	local mod=github.com/llmtop/llmtop v=v0.0.1 proxy=$tmp/proxy
	mkdir -p "$proxy/$mod/@v"
	echo "$v" >"$proxy/$mod/@v/list"
	printf '{"Version":"%s","Time":"%s"}\n' "$v" "$(git log -1 --format=%cI)" >"$proxy/$mod/@v/$v.info"
	git show HEAD:go.mod >"$proxy/$mod/@v/$v.mod"
	git archive --format=zip --prefix="$mod@$v/" -o "$proxy/$mod/@v/$v.zip" HEAD
	# Only what a user's machine has: go on PATH, gcc or not.
	mkdir -p "$tmp/gopath" "$tmp/nocc"
	ln -s "$(command -v go)" "$tmp/nocc/go"
	local upstream
	upstream=$(go env GOPROXY)
	# The first build starts from an empty module cache and build cache; the
	# second reuses them (the downloads and the packages cgo does not change).
	local caches=$tmp/gi-caches
	for variant in gcc nocc; do
		local path=$tmp/nocc:/usr/bin:/bin home=$tmp/gi-$variant
		mkdir -p "$home"
		if [ "$variant" = nocc ]; then
			path=$tmp/nocc
			[ "$(env -i PATH=$path HOME=$home go env CGO_ENABLED)" = 0 ] || { bad "go install without a C compiler: go still enables cgo"; continue; }
		fi
		echo "=== go install $mod/cmd/llmtop@latest ($variant$([ "$variant" = gcc ] && echo ", empty module and build caches"))"
		if ! env -i PATH="$path" HOME="$home" GOPATH="$home/go" GOMODCACHE="$caches/mod" GOCACHE="$caches/build" \
			GOPROXY="file://$proxy,$upstream" GOSUMDB=off GOFLAGS= GOTOOLCHAIN=local \
			go install "$mod/cmd/llmtop@latest" >"$home/log" 2>&1; then
			grep -v 'deprecated\|note:\|^ *|\|^ *[0-9]* |\|^In file' "$home/log" | tail -20
			bad "go install @latest ($variant) failed"
			continue
		fi
		local b=$home/go/bin/llmtop out want
		out=$("$b" version --json)
		if [ "$variant" = gcc ]; then want='.version == "v0.0.1" and .nvml == true'; else want='.version == "v0.0.1" and .nvml == false and (.nvml_note | test("without cgo"))'; fi
		if jq -e "$want" >/dev/null <<<"$out"; then
			ok "go install @latest ($variant): $(jq -c '{version, nvml, nvml_note}' <<<"$out")"
		else
			bad "go install @latest ($variant): $out"
		fi
		if [ "$variant" = nocc ]; then
			"$b" sim --port 0 >/dev/null 2>"$home/sim.err" &
			pids+=($!)
			local u=
			for _ in $(seq 100); do
				u=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$home/sim.err" || true)
				[ -n "$u" ] && break
				sleep 0.1
			done
			out=$("$b" snapshot --json "$u" 2>&1 || true)
			if jq -e '.gpu.error | test("built without cgo")' >/dev/null 2>&1 <<<"$out"; then
				ok "go install @latest (nocc): snapshot says why there are no GPU rows: $(jq -r .gpu.error <<<"$out")"
			else
				bad "go install @latest (nocc): snapshot: $(jq -c .gpu <<<"$out" 2>/dev/null || head -c 1000 <<<"$out")"
			fi
		fi
	done
}

if [ "${1:-}" = repro ] || [ "${1:-}" = goinstall ]; then
	"$1"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi

dist=$(cd "${1:-dist}" && pwd)
[ -f "$dist/SHA256SUMS" ] || { echo "dist-test: no $dist/SHA256SUMS: run make dist first" >&2; exit 1; }
bin() { ls "$dist"/llmtop_*_"$1" 2>/dev/null | head -1; }
amd64=$(bin linux_amd64)
arm64=$(bin linux_arm64)
[ -n "$amd64" ] && [ -n "$arm64" ] || { echo "dist-test: $dist lacks a linux build" >&2; exit 1; }
version=$(basename "$amd64")
version=${version#llmtop_}
version=${version%_linux_amd64}

# --- checksums
if (cd "$dist" && sha256sum --quiet -c SHA256SUMS); then
	ok "SHA256SUMS matches all $(wc -l <"$dist/SHA256SUMS") files"
else
	bad "SHA256SUMS does not match"
fi

# --- the floor
if out=$(scripts/dist/check-glibc.sh "$FLOOR" "$amd64" "$arm64" 2>&1); then
	ok "glibc floor $FLOOR:"
	sed "s|$dist/||; s/^/  /" <<<"$out"
else
	bad "glibc floor $FLOOR: $out"
fi
printf '#include <dlfcn.h>\nint main(void) { return dlopen("libnvidia-ml.so.1", RTLD_LAZY) != 0; }\n' >"$tmp/plain.c"
gcc -o "$tmp/plain" "$tmp/plain.c" -ldl
aarch64-linux-gnu-gcc -o "$tmp/plain-arm64" "$tmp/plain.c" -ldl
if scripts/dist/check-glibc.sh "$FLOOR" "$tmp/plain" >/dev/null 2>"$tmp/plain.err"; then
	bad "check-glibc.sh passed a binary linked the ordinary way against glibc $(ldd --version | sed -n '1s/.* //p')"
else
	ok "check-glibc.sh refuses a binary linked the ordinary way ($(sed -n 2p "$tmp/plain.err" | sed 's/^ *//' | cut -c1-60)…)"
fi

# --- running them
fake_amd64=$tmp/nvml-amd64
fake_arm64=$tmp/nvml-arm64
mkdir -p "$fake_amd64" "$fake_arm64" "$tmp/nolib"
gcc -shared -fPIC -O2 -Wl,-soname,libnvidia-ml.so.1 -o "$fake_amd64/libnvidia-ml.so.1" scripts/dist/fakenvml.c
aarch64-linux-gnu-gcc -shared -fPIC -O2 -Wl,-soname,libnvidia-ml.so.1 -o "$fake_arm64/libnvidia-ml.so.1" scripts/dist/fakenvml.c

# One simulated vLLM for every snapshot, from the build that runs natively.
"$amd64" sim --port 0 >"$tmp/sim.out" 2>"$tmp/sim.err" &
pids+=($!)
url=
for _ in $(seq 100); do
	url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$tmp/sim.err" || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/sim.err"; echo "dist-test: llmtop sim did not start" >&2; exit 1; }

# runs ARCH LABEL LIBPATH FAKE RUNNER…: checks one build on one C library.
# LIBPATH is the C library's folder (empty: this machine's); FAKE holds the
# stand-in libnvidia-ml.so.1.
runs() {
	local arch=$1 label=$2 libs=${3:-$tmp/nolib} fake=$4
	shift 4
	local b
	b=$(bin "linux_$arch")
	local out
	if out=$(LD_LIBRARY_PATH=$libs "$@" "$b" --version 2>&1) && grep -q "^llmtop $version (" <<<"$out"; then
		ok "$label: --version: $out"
	else
		bad "$label: --version: $out"
		return
	fi
	if out=$(LD_LIBRARY_PATH=$libs "$@" "$b" version --json 2>&1) &&
		jq -e --arg p "linux/$arch" --arg f "$FLOOR" '.platform == $p and .nvml == true and .glibc_floor == $f and (.commit | length) == 40' >/dev/null <<<"$out"; then
		ok "$label: version --json: $(jq -c '{version, commit: .commit[:12], date, platform, nvml, glibc_floor}' <<<"$out")"
	else
		bad "$label: version --json: $out"
	fi
	if out=$(LD_LIBRARY_PATH=$libs "$@" "$b" snapshot --json "$url" 2>&1) &&
		jq -e '.endpoints[0].engine == "vllm" and .gpu.error == "no NVIDIA driver: libnvidia-ml.so.1 not found" and (.gpu.gpus | length) == 0' >/dev/null <<<"$out"; then
		ok "$label: snapshot --json without libnvidia-ml.so.1: engine vllm, gpu.error \"$(jq -r .gpu.error <<<"$out")\""
	else
		bad "$label: snapshot --json without libnvidia-ml.so.1: $(jq -c .gpu <<<"$out" 2>/dev/null || head -c 2000 <<<"$out")"
	fi
	if out=$(LD_LIBRARY_PATH=$libs:$fake "$@" "$b" snapshot --json "$url" 2>&1) &&
		jq -e '.gpu.driver == "999.99-fake" and .gpu.cuda == "12.8" and .gpu.gpus[0].name == "llmtop fake NVML GPU" and .gpu.gpus[0].util_pct == 42 and (.gpu.gpus[0].mem_used_bytes | . > 6.4e9 and . < 6.5e9) and .gpu.gpus[0].power_w == 123' >/dev/null <<<"$out"; then
		ok "$label: snapshot --json with a stand-in libnvidia-ml.so.1: $(jq -c '.gpu | {driver, cuda, gpu: .gpus[0] | {name, util_pct, mem_used_bytes, power_w, temp_c}}' <<<"$out")"
	else
		bad "$label: snapshot --json with a stand-in libnvidia-ml.so.1: $(jq -c .gpu <<<"$out" 2>/dev/null || head -c 2000 <<<"$out")"
	fi
}

runs amd64 "linux/amd64 on glibc $(ldd --version | sed -n '1s/.* //p')" "" "$fake_amd64"
runs arm64 "linux/arm64 under qemu-aarch64" "" "$fake_arm64" qemu-aarch64 -L /usr/aarch64-linux-gnu

# --- an older glibc: Debian 11's libc6 (2.31, before libdl and libpthread
# were folded into libc), unpacked into a folder and used by its own loader.
old=${LLMTOP_OLD_GLIBC_DIR:-$HOME/.cache/llmtop/glibc-2.31}
fetch_old() {
	[ -f "$old/amd64/lib/x86_64-linux-gnu/libc.so.6" ] && [ -f "$old/arm64/lib/aarch64-linux-gnu/libc.so.6" ] && return 0
	local a=$tmp/apt
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/debs"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main" >"$a/sources.list"
	local opts=(-o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$a/lists"
		-o Dir::Cache="$a/cache" -o Dir::State::status=/dev/null -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
		-o APT::Sandbox::User=root -o Debug::NoLocking=1)
	apt-get "${opts[@]}" -qq update >"$a/log" 2>&1 &&
		(cd "$a/debs" && apt-get "${opts[@]}" -qq download libc6:amd64 libc6:arm64 >>"$a/log" 2>&1) || {
		sed 's/^/  /' "$a/log" | tail -5
		return 1
	}
	mkdir -p "$old.new/amd64" "$old.new/arm64"
	dpkg-deb -x "$a"/debs/libc6_*_amd64.deb "$old.new/amd64"
	dpkg-deb -x "$a"/debs/libc6_*_arm64.deb "$old.new/arm64"
	rm -rf "$old"
	mv "$old.new" "$old"
}
if fetch_old; then
	lib=$old/amd64/lib/x86_64-linux-gnu
	oldver=$("$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$lib/libc.so.6" | sed -n '1s/.*version \([0-9]*\.[0-9]*\).*/\1/p')
	if out=$(LD_LIBRARY_PATH=$lib "$lib/ld-linux-x86-64.so.2" "$tmp/plain" 2>&1); then
		bad "glibc $oldver: a binary linked the ordinary way started (the old-glibc runner does not use the old glibc?)"
	else
		ok "glibc $oldver refuses a binary linked the ordinary way: $(cut -c1-110 <<<"$out" | sed "s|$tmp/||")"
	fi
	# its own loader, which finds its own libc through LD_LIBRARY_PATH
	runs amd64 "linux/amd64 on glibc $oldver" "$lib" "$fake_amd64" "$lib/ld-linux-x86-64.so.2"
	if out=$(qemu-aarch64 -L "$old/arm64" "$tmp/plain-arm64" 2>&1); then
		bad "glibc $oldver under qemu-aarch64: an arm64 binary linked the ordinary way started (qemu -L does not use the old glibc?)"
	else
		ok "glibc $oldver under qemu-aarch64 refuses an arm64 binary linked the ordinary way: $(cut -c1-110 <<<"$out" | sed "s|$tmp/||")"
	fi
	runs arm64 "linux/arm64 under qemu-aarch64 on glibc $oldver" "" "$fake_arm64" qemu-aarch64 -L "$old/arm64"
else
	echo "not checked: the builds on glibc 2.31, because Debian 11's libc6 could not be fetched (above)"
fi

# --- darwin
for arch in amd64 arm64; do
	b=$(bin "darwin_$arch")
	if [ -z "$b" ]; then
		echo "not checked: darwin/$arch, because make dist did not build it"
		continue
	fi
	magic=$(od -An -tx1 -N4 "$b" | tr -d ' ')
	if [ "$magic" = cffaedfe ] && go version -m "$b" | grep -q 'CGO_ENABLED=0' && go version -m "$b" | grep -q "GOARCH=$arch"; then
		ok "darwin/$arch: a Mach-O 64-bit file built without cgo (its GPU pane says there is no NVIDIA driver on darwin)"
	else
		bad "darwin/$arch: magic $magic, $(go version -m "$b" | grep -E 'CGO_ENABLED|GOARCH' | tr -s '\t\n' '  ')"
	fi
done

# --- the install script, from a local file server
serve() { # DIR → URL
	python3 -u -m http.server --bind 127.0.0.1 --directory "$1" 0 >"$tmp/http-$2.log" 2>&1 &
	pids+=($!)
	local port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$tmp/http-$2.log" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$tmp/http-$2.log" >&2; return 1; }
	echo "http://127.0.0.1:$port"
}
good=$(serve "$dist" good)

# As a user: ~/.local/bin.
home=$tmp/home
mkdir -p "$home"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$tmp"
	chown 65534:65534 "$home"
	if out=$(env -i PATH=/usr/bin:/bin HOME="$home" setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh "$dist/install.sh" --base-url "$good" 2>&1) &&
		grep -q "installed $home/.local/bin/llmtop" <<<"$out" && [ -x "$home/.local/bin/llmtop" ] &&
		[ -f "$home/.local/share/man/man1/llmtop.1" ] && grep -q "llmtop $version" <<<"$out"; then
		ok "install.sh as a user from $good: $(tr '\n' '|' <<<"$out" | sed "s|$tmp/||g")"
	else
		bad "install.sh as a user: $out"
	fi
else
	echo "not checked: install.sh's ~/.local/bin default, because this test needs root and setpriv to run it as another user"
fi

# As root: /usr/local/bin, on a private tmpfs so that this machine's is untouched.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	if out=$(unshare -m sh -c 'mount -t tmpfs tmpfs /usr/local && sh "$1" --base-url "$2" && test -x /usr/local/bin/llmtop && test -f /usr/local/share/man/man1/llmtop.1' \
		sh "$dist/install.sh" "$good" 2>&1) && grep -q "installed /usr/local/bin/llmtop" <<<"$out"; then
		ok "install.sh as root: $(grep -E 'installed|man page' <<<"$out" | tr '\n' '|')"
	else
		bad "install.sh as root: $out"
	fi
else
	echo "not checked: install.sh's /usr/local/bin default, because this test needs root and unshare to give it a private /usr/local"
fi

# With --dir, as root.
if out=$(sh "$dist/install.sh" --base-url "$good" --dir "$tmp/opt/bin" 2>&1) &&
	grep -q "installed $tmp/opt/bin/llmtop" <<<"$out" && [ "$("$tmp/opt/bin/llmtop" --version)" = "$("$amd64" --version)" ]; then
	ok "install.sh --dir: installs $tmp/opt/bin/llmtop and says so"
else
	bad "install.sh --dir: $out"
fi

# A checksum that does not match: refused, nothing installed.
mkdir -p "$tmp/bad"
cp "$dist"/* "$tmp/bad/"
archive=$(basename "$(ls "$dist"/llmtop_*_linux_amd64.tar.gz)")
printf 'x' >>"$tmp/bad/$archive" # the archive changed after SHA256SUMS was written
badurl=$(serve "$tmp/bad" bad)
if out=$(sh "$dist/install.sh" --base-url "$badurl" --dir "$tmp/badbin" 2>&1); then
	bad "install.sh installed an archive whose checksum does not match: $out"
elif grep -q "checksum mismatch for $archive" <<<"$out" && [ ! -e "$tmp/badbin/llmtop" ]; then
	ok "install.sh refuses a bad checksum and installs nothing: $(sed "s|$tmp/||g" <<<"$out" | cut -c1-160)…"
else
	bad "install.sh with a bad checksum: $out; $(ls -la "$tmp/badbin" 2>&1)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
