#!/usr/bin/env bash
# Real engines for the integration tests: Ollama and llama.cpp's llama-server, built from source
# on this machine (CPU only), cached under ~/.cache/llmtop/engines and reused when present.
#
#   scripts/engines.sh build   build what is missing (idempotent); prints what it did and how long
#   scripts/engines.sh test    build (cached), then: go test -tags engines -p 1 ./test/engines/...
#   scripts/engines.sh status  show what is cached
#   scripts/engines.sh check-flags  the engine build flags define no AMX macro (native and Sapphire Rapids)
#
# Why from source: Debian has no llama.cpp and the registries this machine reaches carry no engine
# binaries. Ollama is a Go module (its vendored llama.cpp builds through cgo); llama.cpp's own
# source ships inside the npm package node-llama-cpp as a git bundle for offline builds.
#
# A build that fails because a registry could not be reached is recorded as UNAVAILABLE: the engine
# tests then skip that engine with a loud banner instead of failing. A build that fails after its
# source was fetched is a real failure and the script exits non-zero.
#
# The binaries are built with -march=native: they belong to this kind of machine only. The cache
# key includes the CPU model and a checksum of its flags so a cache carried to another CPU is rebuilt, not crashed.
#
# AMX: on a CPU with AMX (a current Xeon), -march=native defines __AMX_INT8__ and Ollama's vendored
# ggml-cpu then references ggml_backend_amx_buffer_type(), whose source (ggml-cpu/amx/) Ollama's cgo
# package does not compile: the link fails with "undefined reference to ggml_backend_amx_buffer_type()".
# ENGINE_ARCH_FLAGS turns AMX off after -march; every other native extension stays. `engines.sh
# check-flags` proves the flags on a Sapphire Rapids target with the compiler at hand (make test runs it).
set -uo pipefail

OLLAMA_VERSION=0.17.4
# -march for the engine builds (LLMTOP_ENGINE_MARCH=sapphirerapids cross-checks the AMX fix on any CPU:
# it compiles and links, though the result only runs on such a CPU).
ENGINE_MARCH=${LLMTOP_ENGINE_MARCH:-native}
ENGINE_ARCH_FLAGS="-march=$ENGINE_MARCH -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
NODE_LLAMA_CPP_VERSION=3.22.1 # ships llama.cpp release b-tag "v0.5.0" (commit de3ff81) as gitRelease.bundle

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${LLMTOP_ENGINES_CACHE:-$HOME/.cache/llmtop/engines}
CPU_KEY=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //; s/[^A-Za-z0-9]\+/-/g' | cut -c1-32)-$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cksum | cut -c1-6)
[ "$ENGINE_MARCH" = native ] || CPU_KEY=march-$ENGINE_MARCH
# "noamx": builds from before the AMX fix (cached under the old key) are not reused.
OLLAMA_DIR=$CACHE/ollama-$OLLAMA_VERSION-noamx-$CPU_KEY
LLAMA_DIR=$CACHE/llama-server-nlc$NODE_LLAMA_CPP_VERSION-$CPU_KEY
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

log() { printf '[engines %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
loud() {
	printf '\n'
	printf '!%.0s' $(seq 1 78)
	printf '\n'
	printf '!!! %s\n' "$@"
	printf '!%.0s' $(seq 1 78)
	printf '\n\n'
}
secs() { echo $(($(date +%s) - $1)); }

# apt_need installs the Debian packages that are missing (one apt-get update, only when needed).
apt_need() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "apt-get install ${missing[*]}"
	local t0; t0=$(date +%s)
	$SUDO apt-get update -qq >/dev/null 2>&1 || true
	if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; then
		return 1
	fi
	log "apt-get install done in $(secs "$t0")s"
}

# mark_unavailable records that an engine could not be built for a reason outside the project.
mark_unavailable() { # dir reason
	mkdir -p "$1"
	printf '%s\n' "$2" >"$1/UNAVAILABLE"
	loud "ENGINE UNAVAILABLE: $2" "its integration tests will SKIP (not pass) until this build succeeds"
}

# miniaudio stub: Ollama's module zip lacks llama.cpp's vendor/ folder. nlohmann/json and stb come
# from Debian; miniaudio (only used to decode audio input, which a text model never sees) does not,
# so a declaration-only stub that fails every call stands in for it.
write_miniaudio_stub() {
	mkdir -p "$1/miniaudio"
	cat >"$1/miniaudio/miniaudio.h" <<'EOF'
/* Stub for llmtop's engine build: audio decoding is not available (every call fails). */
#ifndef LLMTOP_MINIAUDIO_STUB_H
#define LLMTOP_MINIAUDIO_STUB_H
#include <stddef.h>
#include <stdint.h>
typedef int ma_result;
typedef uint64_t ma_uint64;
typedef uint32_t ma_uint32;
#define MA_SUCCESS 0
#define MA_ERROR (-1)
typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;
typedef enum { ma_encoding_format_wav = 1 } ma_encoding_format;
typedef struct { ma_format format; ma_uint32 channels; ma_uint32 sampleRate; } ma_decoder_config;
typedef struct { int unused; } ma_decoder;
typedef struct { int unused; } ma_encoder_config;
typedef struct { int unused; } ma_encoder;
static inline ma_decoder_config ma_decoder_config_init(ma_format f, ma_uint32 c, ma_uint32 r) {
	ma_decoder_config cfg; cfg.format = f; cfg.channels = c; cfg.sampleRate = r; return cfg;
}
static inline ma_result ma_decoder_init_memory(const void *d, size_t n, const ma_decoder_config *c, ma_decoder *o) {
	(void)d; (void)n; (void)c; (void)o; return MA_ERROR;
}
static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *d, ma_uint64 *n) { (void)d; *n = 0; return MA_ERROR; }
static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *d, void *o, ma_uint64 n, ma_uint64 *r) {
	(void)d; (void)o; (void)n; *r = 0; return MA_ERROR;
}
static inline ma_result ma_decoder_uninit(ma_decoder *d) { (void)d; return MA_SUCCESS; }
#endif
EOF
}

build_ollama() {
	local bin=$OLLAMA_DIR/bin/ollama
	if [ -x "$bin" ]; then
		log "ollama $OLLAMA_VERSION: cached at $bin"
		return 0
	fi
	rm -f "$OLLAMA_DIR/UNAVAILABLE"
	apt_need gcc g++ nlohmann-json3-dev libstb-dev || { mark_unavailable "$OLLAMA_DIR" "apt-get could not install ollama's build packages"; return 0; }
	mkdir -p "$OLLAMA_DIR/stub" "$OLLAMA_DIR/bin"
	write_miniaudio_stub "$OLLAMA_DIR/stub"
	local t0; t0=$(date +%s)
	log "ollama $OLLAMA_VERSION: fetching the module"
	# Run outside the repo with a clean GOFLAGS so nothing touches llmtop's go.mod.
	if ! (cd "$OLLAMA_DIR" && GOFLAGS= GO111MODULE=on go mod download "github.com/ollama/ollama@v$OLLAMA_VERSION") >"$OLLAMA_DIR/fetch.log" 2>&1; then
		tail -5 "$OLLAMA_DIR/fetch.log"
		mark_unavailable "$OLLAMA_DIR" "could not fetch github.com/ollama/ollama@v$OLLAMA_VERSION from the Go module proxy (see $OLLAMA_DIR/fetch.log)"
		return 0
	fi
	log "ollama $OLLAMA_VERSION: building (cgo, -O3 $ENGINE_ARCH_FLAGS; ~12 min on 2 cores; log: $OLLAMA_DIR/build.log)"
	if ! (cd "$OLLAMA_DIR" &&
		GOFLAGS= GO111MODULE=on CGO_ENABLED=1 GOBIN="$OLLAMA_DIR/bin" \
			CGO_CFLAGS="-O3 $ENGINE_ARCH_FLAGS" CGO_CXXFLAGS="-O3 $ENGINE_ARCH_FLAGS" \
			CGO_CPPFLAGS="-I$OLLAMA_DIR/stub" \
			nice -n 19 go install -ldflags="-X=github.com/ollama/ollama/version.Version=$OLLAMA_VERSION" \
			"github.com/ollama/ollama@v$OLLAMA_VERSION") >"$OLLAMA_DIR/build.log" 2>&1; then
		tail -30 "$OLLAMA_DIR/build.log"
		if grep -qiE 'dial tcp|proxy\.golang|no such host|i/o timeout|connection refused|TLS handshake' "$OLLAMA_DIR/build.log"; then
			mark_unavailable "$OLLAMA_DIR" "ollama's dependencies could not be fetched (registry unreachable; see $OLLAMA_DIR/build.log)"
			return 0
		fi
		loud "ollama $OLLAMA_VERSION BUILD FAILED (see $OLLAMA_DIR/build.log)"
		return 1
	fi
	log "ollama $OLLAMA_VERSION: built in $(secs "$t0")s -> $bin ($("$bin" --version 2>&1 | grep -o "version is .*" | sed "s/is //"))"
}

build_llama_server() {
	local bin=$LLAMA_DIR/bin/llama-server
	if [ -x "$bin" ]; then
		log "llama-server (node-llama-cpp $NODE_LLAMA_CPP_VERSION): cached at $bin"
		return 0
	fi
	rm -f "$LLAMA_DIR/UNAVAILABLE"
	local pkgs=(gcc g++ cmake git)
	command -v npm >/dev/null 2>&1 || pkgs+=(npm) # node may come from elsewhere (nodesource)
	apt_need "${pkgs[@]}" || { mark_unavailable "$LLAMA_DIR" "apt-get could not install llama-server's build packages"; return 0; }
	mkdir -p "$LLAMA_DIR/bin"
	local t0; t0=$(date +%s)
	local src=$LLAMA_DIR/src
	if [ ! -d "$src/llama.cpp/.git" ]; then
		rm -rf "$src" && mkdir -p "$src"
		log "llama-server: npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION (llama.cpp source bundle)"
		if ! (cd "$src" && npm pack --silent "node-llama-cpp@$NODE_LLAMA_CPP_VERSION") >"$LLAMA_DIR/fetch.log" 2>&1; then
			tail -5 "$LLAMA_DIR/fetch.log"
			mark_unavailable "$LLAMA_DIR" "npm pack node-llama-cpp@$NODE_LLAMA_CPP_VERSION failed: npm registry unreachable? (see $LLAMA_DIR/fetch.log)"
			return 0
		fi
		if ! (cd "$src" && tar -xzf "node-llama-cpp-$NODE_LLAMA_CPP_VERSION.tgz" package/llama/gitRelease.bundle &&
			git clone -q package/llama/gitRelease.bundle llama.cpp && rm -rf package ./*.tgz) >>"$LLAMA_DIR/fetch.log" 2>&1; then
			tail -5 "$LLAMA_DIR/fetch.log"
			loud "llama-server: could not unpack llama.cpp from node-llama-cpp's bundle (see $LLAMA_DIR/fetch.log)"
			return 1
		fi
	fi
	log "llama-server: llama.cpp $(git -C "$src/llama.cpp" describe --tags --always 2>/dev/null); configuring"
	if ! (cmake -S "$src/llama.cpp" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
		-DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF) >"$LLAMA_DIR/build.log" 2>&1; then
		tail -30 "$LLAMA_DIR/build.log"
		loud "llama-server: cmake configure FAILED (see $LLAMA_DIR/build.log)"
		return 1
	fi
	log "llama-server: building (--target llama-server -j2; ~10 min on 2 cores; log: $LLAMA_DIR/build.log)"
	if ! nice -n 19 cmake --build "$src/build" --target llama-server -j2 >>"$LLAMA_DIR/build.log" 2>&1; then
		tail -30 "$LLAMA_DIR/build.log"
		loud "llama-server BUILD FAILED (see $LLAMA_DIR/build.log)"
		return 1
	fi
	cp "$src/build/bin/llama-server" "$bin.tmp" && mv "$bin.tmp" "$bin"
	rm -rf "$src/build" # 300+ MB of objects; the source stays for a rebuild
	log "llama-server: built in $(secs "$t0")s -> $bin ($("$bin" --version 2>&1 | grep -m1 version))"
}

cmd_build() {
	local t0; t0=$(date +%s)
	mkdir -p "$CACHE"
	local rc=0
	# One after the other: two parallel compiles on 2 cores make each far slower.
	build_llama_server || rc=1
	build_ollama || rc=1
	log "build finished in $(secs "$t0")s (cache: $CACHE)"
	return $rc
}

# cmd_check_flags proves ENGINE_ARCH_FLAGS leave no AMX macro defined, on the CPU at hand (native)
# and on Sapphire Rapids (AMX in its -march), with the C and C++ compilers the builds use. It needs
# only the compilers, so make test runs it on every machine, AMX or not.
cmd_check_flags() {
	local cc rc=0 march flags defs
	for cc in gcc g++; do
		command -v "$cc" >/dev/null 2>&1 || { echo "check-flags: $cc not found" >&2; return 1; }
		for march in native sapphirerapids; do
			flags=${ENGINE_ARCH_FLAGS/-march=$ENGINE_MARCH/-march=$march}
			# The check must be able to fail: without the -mno flags, Sapphire Rapids defines AMX.
			# (grep reads a variable, not a pipe: grep -q closing early fails a pipe under pipefail.)
			if [ "$march" = sapphirerapids ] &&
				! grep -q '__AMX_INT8__' <<<"$(echo | "$cc" -march=sapphirerapids -dM -E -x c - 2>/dev/null)"; then
				echo "check-flags: $cc -march=sapphirerapids defines no __AMX_INT8__: this check could not fail" >&2
				rc=1
				continue
			fi
			if ! defs=$(echo | "$cc" $flags -dM -E -x c - 2>&1); then
				echo "check-flags: $cc $flags: $defs" >&2
				rc=1
				continue
			fi
			if grep -q '__AMX' <<<"$defs"; then
				echo "check-flags: $cc $flags still defines $(grep -o '__AMX[A-Z0-9_]*' <<<"$defs" | tr '\n' ' ')" >&2
				rc=1
			else
				echo "check-flags: $cc $flags: no AMX macro"
			fi
		done
	done
	return $rc
}

cmd_status() {
	for d in "$OLLAMA_DIR" "$LLAMA_DIR"; do
		if [ -f "$d/UNAVAILABLE" ]; then
			echo "$(basename "$d"): UNAVAILABLE: $(cat "$d/UNAVAILABLE")"
		elif ls "$d"/bin/* >/dev/null 2>&1; then
			echo "$(basename "$d"): $(ls "$d"/bin/*)"
		else
			echo "$(basename "$d"): not built"
		fi
	done
}

cmd_test() {
	cmd_build || { loud "engine build failed: see above"; return 1; }
	local t0; t0=$(date +%s)
	export LLMTOP_OLLAMA="$OLLAMA_DIR/bin/ollama" LLMTOP_LLAMA_SERVER="$LLAMA_DIR/bin/llama-server"
	export LLMTOP_OLLAMA_UNAVAILABLE="" LLMTOP_LLAMA_SERVER_UNAVAILABLE=""
	[ -f "$OLLAMA_DIR/UNAVAILABLE" ] && LLMTOP_OLLAMA_UNAVAILABLE=$(cat "$OLLAMA_DIR/UNAVAILABLE")
	[ -f "$LLAMA_DIR/UNAVAILABLE" ] && LLMTOP_LLAMA_SERVER_UNAVAILABLE=$(cat "$LLAMA_DIR/UNAVAILABLE")
	export LLMTOP_BIN="$ROOT/bin/llmtop"
	# make test-engines has just built it; a direct call must not test a stale binary either.
	(cd "$ROOT" && make -s build) || return 1
	export LLMTOP_ENGINES_REQUIRED=1 # a binary that was built must be there: missing fails, not skips
	# The tests record each engine's process group here; a group still alive after go test (a test
	# binary killed by its timeout) is ended by its id below.
	LLMTOP_ENGINES_RUNDIR=$(mktemp -d)
	export LLMTOP_ENGINES_RUNDIR
	log "running: go test -tags engines -p 1 -count=1 -v ./test/engines/..."
	(cd "$ROOT" && go test -tags engines -p 1 -count=1 -timeout 20m -v ./test/engines/...)
	local rc=$?
	local f pg
	for f in "$LLMTOP_ENGINES_RUNDIR"/*.pgid; do
		[ -e "$f" ] || continue
		pg=$(cat "$f")
		if kill -0 -- "-$pg" 2>/dev/null; then
			log "stopping leftover engine process group $pg ($(basename "$f" .pgid))"
			kill -KILL -- "-$pg" 2>/dev/null || true
		fi
	done
	rm -rf "$LLMTOP_ENGINES_RUNDIR"
	[ -n "$LLMTOP_OLLAMA_UNAVAILABLE" ] && loud "OLLAMA TESTS SKIPPED: $LLMTOP_OLLAMA_UNAVAILABLE"
	[ -n "$LLMTOP_LLAMA_SERVER_UNAVAILABLE" ] && loud "LLAMA-SERVER TESTS SKIPPED: $LLMTOP_LLAMA_SERVER_UNAVAILABLE"
	log "engine tests finished in $(secs "$t0")s (rc=$rc)"
	return $rc
}

main() {
	case "${1:-}" in
	build) cmd_build ;;
	test) cmd_test ;;
	status) cmd_status ;;
	check-flags) cmd_check_flags ;;
	*)
		echo "usage: $0 build|test|status|check-flags" >&2
		return 2
		;;
	esac
}

# One line, parsed whole before it runs: editing this file while a build runs cannot make bash read
# on into the edited text.
main "$@"; exit $?
