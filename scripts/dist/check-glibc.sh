#!/usr/bin/env bash
# check-glibc.sh FLOOR BINARY…: fail when a release binary would not start on
# glibc FLOOR. It reads what the dynamic loader checks before main runs:
#  - every GLIBC_x.y version the binary needs (.gnu.version_r) is ≤ FLOOR;
#  - it needs no library but libc.so.6, libdl.so.2 and libpthread.so.0
#    (every glibc since 2.3 has them; no libstdc++, libgcc_s, libresolv…);
#  - it does not bind every symbol at start (BIND_NOW): go-nvml leaves the
#    NVML functions to be found in libnvidia-ml.so.1 after dlopen, so an
#    eager binding would refuse to start on a box without the driver.
# It prints, per binary, the highest version it needs.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: check-glibc.sh FLOOR BINARY..." >&2; exit 2; }
floor=$1
shift
key() { awk -F. '{printf "%05d%05d%05d\n", $1, $2, $3}' <<<"$1"; }
status=0
for bin in "$@"; do
	[ -f "$bin" ] || { echo "check-glibc: $bin: no such file" >&2; status=1; continue; }
	if ! readelf -h "$bin" >/dev/null 2>&1; then
		echo "check-glibc: $bin: not an ELF file" >&2
		status=1
		continue
	fi
	vers=$(readelf -W -V "$bin" | sed -n 's/.*Name: GLIBC_\([0-9.]*\) .*/\1/p' | sort -uV)
	[ -n "$vers" ] || { echo "check-glibc: $bin: needs no GLIBC version (not a dynamically linked glibc binary?)" >&2; status=1; continue; }
	highest=$(tail -1 <<<"$vers")
	problems=()
	for v in $vers; do
		if [[ $(key "$v") > $(key "$floor") ]]; then
			syms=$(readelf -W --dyn-syms "$bin" | awk -v v="@GLIBC_$v" 'index($8, v) {sub(/@.*/, "", $8); print $8}' | sort -u | tr '\n' ' ')
			problems+=("needs GLIBC_$v (> $floor) for: ${syms% }")
		fi
	done
	other=$(readelf -W -V "$bin" | sed -n 's/.*Name: \([A-Z][A-Z_]*_[0-9][0-9.]*\) .*/\1/p' | grep -v '^GLIBC_' | sort -u | tr '\n' ' ' || true)
	[ -z "$other" ] || problems+=("needs versions of other libraries: ${other% }")
	needed=$(readelf -W -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
	for lib in $needed; do
		case $lib in libc.so.6 | libdl.so.2 | libpthread.so.0) ;; *) problems+=("needs $lib") ;; esac
	done
	if readelf -W -d "$bin" | grep -Eq '\(BIND_NOW\)|\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW'; then
		problems+=("binds every symbol at start (BIND_NOW): would not start without libnvidia-ml.so.1")
	fi
	if [ ${#problems[@]} -gt 0 ]; then
		printf 'check-glibc: %s does not start on glibc %s:\n' "$bin" "$floor" >&2
		printf '  %s\n' "${problems[@]}" >&2
		status=1
	else
		printf '%s: highest glibc symbol version GLIBC_%s (floor %s); needs %s\n' "$bin" "$highest" "$floor" "${needed% }"
	fi
done
exit $status
