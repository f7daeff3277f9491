# defaults.sh — bench/run's `defaults` suite (issue #32, point 5): one table
# that decides the library's defaults.  Sourced by bench/run; uses its $b,
# $W, $here, $lib, $quick, $pairs, $csv, rec, stat_of, the model (model.sh)
# and lib.sh (median, minmax, apt_need, the MariaDB server).
#
# Workloads: `clang --version`; four concurrent `clang++ -O2 -c` of
# zero-copy.d/work.cpp (the first and the second run after clang's files
# were dropped from the page cache); `python3 -c pass`; synth64 making one
# call (the 64 MiB probe that exits at once: the costs suite's start-up
# probe); synth64 as a long run (random calls, ns per call measured inside);
# mariadbd + sysbench oltp_read_only; postgres + pgbench -S; `java -version`.
#
# Variants: plain (no library); old (the defaults before 1643354/2506de6:
# ENORMOUSTEXT_DEFER=0 PRIME=0 COPY_MIN=0); new (no variable at all); and
# each opt-in alone on top of the old defaults: prime (PRIME=auto), defer
# (DEFER=1s), copymin (COPY_MIN=256K: acts only in a deferred pass, so
# alone it is the old defaults), hot (HOT=auto with DEFER=1s).
#
# Per run: start-up (short programs: wall time; servers: until the first
# answer; batch runs: wall time), CPU (user + sys of the process tree, from
# wait4: runstat), the library's own CPU (the sum of cpu_ns over the
# processes' ENORMOUSTEXT_REPORT files), peak RSS (the largest process of the
# tree, wait4's ru_maxrss), text Pss (the executable mappings' Pss in
# /proc/PID/smaps summed over the tree, sampled while it runs: the peak) and
# the share of that text on huge pages (AnonHugePages + FilePmdMapped over
# Size, the best sample), and the time ratio to plain of the same round:
# rounds alternate the variants, the order turning each round, and the table
# gives the median ratio and min..max.
#
# The page cache: every run of a variant starts with the workload's big
# files in small folios (cache_small, as a host that has run them for a
# while holds them), made so again after any run that may have primed them
# (the variants with PRIME=auto); the four compiles start from the files
# dropped instead (POSIX_FADV_DONTNEED on clang's binary, libLLVM and
# libclang-cpp only) and are run twice, so that the second run shows what
# the first left in the page cache for everyone.

dv_variants=(plain old new prime defer copymin hot)
# BENCH_DEFAULTS_VARIANTS / BENCH_DEFAULTS_WORKLOADS (space-separated) run
# a part of the table: variants by name (plain always), workloads by key:
# clang-version python probe java synth-long clang4 mariadb postgres
if [[ -n ${BENCH_DEFAULTS_VARIANTS:-} ]]; then
	read -r -a dv_variants <<<"plain ${BENCH_DEFAULTS_VARIANTS//plain/}"
fi
dv_want() { [[ -z ${BENCH_DEFAULTS_WORKLOADS:-} || " $BENCH_DEFAULTS_WORKLOADS " == *" $1 "* ]]; }

# dv_env VARIANT REPORTDIR — sets env=(...) for VARIANT
dv_env() {
	env=()
	[[ $1 == plain ]] && return 0
	env=(LD_PRELOAD="$lib" ENORMOUSTEXT_REPORT="$2/%p.json")
	case $1 in
	old) env+=(ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0 ENORMOUSTEXT_COPY_MIN=0) ;;
	new) ;;
	prime) env+=(ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=auto ENORMOUSTEXT_COPY_MIN=0) ;;
	defer) env+=(ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_PRIME=0 ENORMOUSTEXT_COPY_MIN=0) ;;
	copymin) env+=(ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0 ENORMOUSTEXT_COPY_MIN=256K) ;;
	hot) env+=(ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_PRIME=0 ENORMOUSTEXT_COPY_MIN=0 ENORMOUSTEXT_HOT=auto) ;;
	*) echo "run: defaults: unknown variant $1" >&2; return 1 ;;
	esac
}

# the variants that may leave the page cache primed (huge folios)
dv_primes() { [[ $1 == new || $1 == prime ]]; }

# dv_order ROUND — the variants in the order of that round (turned each round)
dv_order() {
	local k=$(( ($1 - 1) % ${#dv_variants[@]} ))
	order=("${dv_variants[@]:k}" "${dv_variants[@]:0:k}")
}

# dv_files PROGRAM — the program's file and every library it loads (real
# paths, once each): the files a PRIME=auto run may leave primed (libz3's
# windows as well as libLLVM's), so the files to put back in small folios
dv_files() {
	{ readlink -f "$1"; ldd "$1" | awk '$3 ~ /^\// { print $3 }' | xargs -r readlink -f; } | awk '!s[$0]++'
}

# dv_rep DIR — a fresh report directory (open to the servers' users)
dv_rep() { rm -rf "$1" && mkdir -p "$1" && chmod 1777 "$1"; }

# dv_lib_ms DIR — the library's CPU in ms: cpu_ns summed over the reports
dv_lib_ms() {
	{ cat "$1"/*.json 2>/dev/null || true; } | sed -n 's/^  "cpu_ns": \([0-9]*\),*$/\1/p' | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }'
}

# dv_copy_mib DIR — the most huge text one process of the run had (report)
dv_copy_mib() {
	{ cat "$1"/*.json 2>/dev/null || true; } | sed -n 's/^  "huge_bytes": \([0-9]*\),*$/\1/p' | awk '$1 > m { m = $1 } END { printf "%.0f", m / 1048576 }'
}

# dv_sampled OUT MS ENV... -- COMMAND...: runs COMMAND under runstat with
# ENV, sampled every MS ms; runstat's line in $W/dst, the sampler's in OUT,
# COMMAND's stdout in $W/dout
dv_sampled() {
	local out=$1 ms=$2 env=()
	shift 2
	while [[ $1 != -- ]]; do env+=("$1"); shift; done
	shift
	"$W/runstat" env "${env[@]}" "$@" >"$W/dout" 2>"$W/dst" &
	local rp=$!
	"$W/dtool" sample "$ms" "$rp" >"$out"
	wait "$rp" || { echo "run: defaults: '$*' failed: $(tail -3 "$W/dst" | tr '\n' ' ')" >&2; return 1; }
}

# dv_rec WORKLOAD VARIANT ROUND METRIC VALUE — the suite reports its
# figures itself (direction `own`: left out of the generic summary)
dv_rec() { rec defaults "$1" "$2" "$3" "$4" "$5" own; }

# dv_sample_rec WORKLOAD VARIANT ROUND FILE [SUFFIX] — text Pss and huge share
dv_sample_rec() {
	local pss huge size share procs samples
	read -r pss huge size share procs samples <"$4" || return 0
	((samples > 0)) || return 0
	dv_rec "$1" "$2" "$3" "pss_mib${5:-}" "$(awk -v k="$pss" 'BEGIN { printf "%.1f", k / 1024 }')"
	dv_rec "$1" "$2" "$3" "huge_pct${5:-}" "$share"
	dv_rec "$1" "$2" "$3" "procs${5:-}" "$procs"
}

# ------------------------------------------------------------------------
# A short program: per round and variant (in the round's order) N runs one
# after the other (the medians of wall, CPU, peak RSS, library CPU), then
# one more run sampled every 2 ms for its text.
#   dv_short WORKLOAD N FILE... -- COMMAND...
dv_short() {
	local wl=$1 n=$2 files=()
	shift 2
	while [[ $1 != -- ]]; do files+=("$1"); shift; done
	shift
	echo "== defaults: $wl ($n runs a variant a round, $pairs rounds)"
	local r v i dirty=1 order
	for r in $(seq "$pairs"); do
		dv_order "$r"
		for v in "${order[@]}"; do
			((dirty)) && "$W/cache_small" "${files[@]}"
			dirty=0
			local walls=() cpus=() rss=() libs=() wall user sys mr st env
			for i in $(seq "$n"); do
				dv_rep "$W/drep"
				dv_env "$v" "$W/drep"
				"$W/runstat" env "${env[@]}" "$@" >/dev/null 2>"$W/dst" || true
				read -r wall user sys mr st < <(stat_of "$W/dst")
				[[ $st == 0 ]] || { echo "run: defaults: $wl ($v) failed: $(tail -3 "$W/dst" | tr '\n' ' ')" >&2; return 1; }
				walls+=("$wall") cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')") rss+=("$mr")
				libs+=("$(dv_lib_ms "$W/drep")")
			done
			local mw mc mr ml
			mw=$(printf '%s\n' "${walls[@]}" | median)
			mc=$(printf '%s\n' "${cpus[@]}" | median)
			mr=$(printf '%s\n' "${rss[@]}" | median)
			ml=$(printf '%s\n' "${libs[@]}" | median)
			dv_rec "$wl" "$v" "$r" start_s "$mw"
			dv_rec "$wl" "$v" "$r" work "$mw"
			dv_rec "$wl" "$v" "$r" cpu_s "$mc"
			dv_rec "$wl" "$v" "$r" rss_mib "$(awk -v k="$mr" 'BEGIN { printf "%.1f", k / 1024 }')"
			dv_rec "$wl" "$v" "$r" lib_ms "$ml"
			dv_rep "$W/drep"
			dv_env "$v" "$W/drep"
			dv_sampled "$W/dsamp" 2 "${env[@]}" -- "$@" || return 1
			dv_sample_rec "$wl" "$v" "$r" "$W/dsamp"
			local pss
			pss=$(awk '{ printf "%.1f MiB text Pss, %s%% huge", $1 / 1024, $4 }' "$W/dsamp")
			printf '   round %d %-8s wall %7.1f ms  CPU %7.1f ms  library %6.1f ms  RSS %6.1f MiB  %s\n' "$r" "$v" \
				"$(awk -v w="$mw" 'BEGIN { print w * 1000 }')" "$(awk -v w="$mc" 'BEGIN { print w * 1000 }')" "$ml" \
				"$(awk -v k="$mr" 'BEGIN { print k / 1024 }')" "$pss"
			if dv_primes "$v"; then dirty=1; fi
		done
	done
	return 0
}

# dv_spawn WORKLOAD RUNS FILE... -- COMMAND...: the new defaults against
# plain with spawnbench (one execution of each in turn, A B A B ..., the
# ratio of the medians per pair; $pairs pairs): the finer measure of a
# short program's start-up, for the targets.  Nothing primes here (the new
# defaults defer by 1 s: these programs are gone by then).
dv_spawn() {
	local wl=$1 runs=$2 files=()
	shift 2
	while [[ $1 != -- ]]; do files+=("$1"); shift; done
	shift
	"$W/cache_small" "${files[@]}"
	"$b/bench/spawnbench" -p "$pairs" -r "$runs" "$lib" "$@" >"$W/dspawn" 2>&1 || { cat "$W/dspawn"; return 1; }
	local k=0 a bb
	while read -r a bb; do
		k=$((k + 1))
		rec defaults "$wl" spawn-plain "$k" start_us "$a" own
		rec defaults "$wl" spawn-new "$k" start_us "$bb" own
	done < <(sed -n 's/^pair *[0-9]*: plain *\([0-9.]*\) us, preloaded *\([0-9.]*\) us.*/\1 \2/p' "$W/dspawn")
	tail -1 "$W/dspawn" | sed "s/^/   $wl, new defaults vs plain (spawnbench, $runs runs a pair): /"
}

# ------------------------------------------------------------------------
# synth64 as a long run: random calls over all 64 MiB, long enough that a
# deferred worker (1 s) moves the text early in it.  The time compared is
# the ns per call the program measures over the whole run.
dv_synth_long() {
	local d=$1 calls=40000000
	((quick)) && calls=10000000
	echo "== defaults: synth64 long run ($calls random calls; $hp rounds)"
	local r v dirty=1 order env
	for r in $(seq "$hp"); do
		dv_order "$r"
		for v in "${order[@]}"; do
			((dirty)) && "$W/cache_small" "$d/synth64" "$d/libsynth64.so"
			dirty=0
			dv_rep "$W/drep"
			dv_env "$v" "$W/drep"
			dv_sampled "$W/dsamp" 250 "${env[@]}" -- "$d/synth64" "$calls" random || return 1
			local wall user sys mr st ns
			read -r wall user sys mr st < <(stat_of "$W/dst")
			ns=$(sed -n 's/.* ns_per_call \([0-9.]*\).*/\1/p' "$W/dout")
			dv_rec synth64-long "$v" "$r" start_s "$wall"
			dv_rec synth64-long "$v" "$r" work "$ns"
			dv_rec synth64-long "$v" "$r" cpu_s "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
			dv_rec synth64-long "$v" "$r" rss_mib "$(awk -v k="$mr" 'BEGIN { printf "%.1f", k / 1024 }')"
			dv_rec synth64-long "$v" "$r" lib_ms "$(dv_lib_ms "$W/drep")"
			dv_sample_rec synth64-long "$v" "$r" "$W/dsamp"
			printf '   round %d %-8s %7.1f ns/call  wall %6.2f s  library %6.1f ms  %s\n' "$r" "$v" "$ns" "$wall" \
				"$(dv_lib_ms "$W/drep")" "$(awk '{ printf "%.1f MiB text Pss, %s%% huge", $1 / 1024, $4 }' "$W/dsamp")"
			if dv_primes "$v"; then dirty=1; fi
		done
	done
	[[ $model == yes ]] || return 0
	# the model: each variant once, whole process (start-up and the move
	# included; under Valgrind the 1 s deferral falls earlier in the run).
	# Half the calls: with a tenth (4 M), an unloaded machine ran the
	# program under Valgrind in about 3 s and the deferred worker's move
	# (seconds under Valgrind) had not ended when it exited
	local mcalls=$((calls / 2))
	for v in "${dv_variants[@]}"; do
		"$W/cache_small" "$d/synth64" "$d/libsynth64.so"
		dv_rep "$W/drep"
		dv_env "$v" "$W/drep"
		model_cmd "dflt-synth-$v"
		env "${env[@]}" "${MODEL[@]}" "$d/synth64" "$mcalls" random >/dev/null
		model_take defaults synth64-long "$v" "dflt-synth-$v"
	done
	return 0
}

# ------------------------------------------------------------------------
# Four concurrent clang++ -O2 -c of work.cpp (--quick: -fsyntax-only), as `make -j4`
# would start them (one shell, four children), twice after clang's files
# were dropped from the page cache: the first run reads them from disk (and
# with PRIME=auto leaves them as 2 MiB folios), the second is what every
# later run gets.  Both runs sampled every 250 ms.
dv_clang4() {
	local cxx=$1 opt="-O2 -c"
	shift
	((quick)) && opt=-fsyntax-only
	local files=("$@")
	local job="for i in 1 2 3 4; do \"$cxx\" -std=c++17 $opt \"$here/zero-copy.d/work.cpp\" -o \"$W/w\$i.o\" & done; wait"
	echo "== defaults: 4 concurrent clang++ $opt, first and second run after dropping clang's ${#files[@]} files from the page cache ($hp rounds)"
	local r v order env k
	for r in $(seq "$hp"); do
		dv_order "$r"
		for v in "${order[@]}"; do
			"$W/dtool" drop "${files[@]}"
			local line=""
			for k in 1 2; do
				dv_rep "$W/drep$k"
				dv_env "$v" "$W/drep$k"
				dv_sampled "$W/dsamp$k" 250 "${env[@]}" -- sh -c "$job" || return 1
				local wall user sys mr st sfx=""
				read -r wall user sys mr st < <(stat_of "$W/dst")
				if ((k == 1)); then sfx=1; fi
				local cpu libms
				cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
				libms=$(dv_lib_ms "$W/drep$k")
				dv_rec clang++x4 "$v" "$r" "cpu_s$sfx" "$cpu"
				dv_rec clang++x4 "$v" "$r" "lib_ms$sfx" "$libms"
				dv_rec clang++x4 "$v" "$r" "copy_mib$sfx" "$(dv_copy_mib "$W/drep$k")"
				dv_sample_rec clang++x4 "$v" "$r" "$W/dsamp$k" "$sfx"
				if ((k == 2)); then
					dv_rec clang++x4 "$v" "$r" start_s "$wall"
					dv_rec clang++x4 "$v" "$r" work "$wall"
					dv_rec clang++x4 "$v" "$r" rss_mib "$(awk -v k="$mr" 'BEGIN { printf "%.1f", k / 1024 }')"
				else
					dv_rec clang++x4 "$v" "$r" wall_s1 "$wall"
				fi
				line+=$(printf '  run %d: %5.2f s, CPU %5.2f s, library %6.1f ms, %s' "$k" "$wall" "$cpu" "$libms" \
					"$(awk '{ printf "text Pss %.0f MiB (%d processes), %s%% huge", $1 / 1024, $5, $4 }' "$W/dsamp$k")")
			done
			printf '   round %d %-8s%s\n' "$r" "$v" "$line"
		done
	done
	return 0
}

# ------------------------------------------------------------------------
# MariaDB: the server under runstat (its CPU and peak RSS at exit),
# start-up to the first answer, then sysbench oltp_read_only on one thread;
# the time compared is seconds per 1000 transactions.
dv_mariadb() {
	[[ $(id -u) -eq 0 ]] || { echo "run: defaults: MariaDB needs root: skipped"; return 0; }
	apt_need mariadb-server sysbench || { echo "run: defaults: no MariaDB: skipped"; return 0; }
	local secs=10 warm=2
	((quick)) && { secs=3; warm=1; }
	echo "== defaults: MariaDB $($mysqld --version | awk '{ print $3 }') + sysbench oltp_read_only, 1 thread, $secs s ($hp rounds)"
	[[ -d $(db_dir)/sbtest ]] || { mariadb_init && mariadb_prepare; }
	local mfiles=()
	mapfile -t mfiles < <(dv_files "$mysqld")
	local r v dirty=1 order env
	for r in $(seq "$hp"); do
		dv_order "$r"
		for v in "${order[@]}"; do
			((dirty)) && "$W/cache_small" "${mfiles[@]}"
			dirty=0
			dv_rep "$W/drep"
			dv_env "$v" "$W/drep"
			server_wrap=("$W/runstat" env "${env[@]}")
			mariadb_start
			server_wrap=()
			"$W/dtool" sample 250 "$server_pid" >"$W/dsamp" &
			local sp=$!
			sysbench_cmd --threads=1 --time="$warm" oltp_read_only run >/dev/null
			local o tps
			o=$(sysbench_cmd --threads=1 --time="$secs" oltp_read_only run)
			tps=$(awk '/transactions:/ { gsub(/[(]/, "", $3); print $3 }' <<<"$o")
			mariadb_stop
			wait "$sp" || true
			local wall user sys mr st
			read -r wall user sys mr st < <(tail -1 "$W/db.log")
			[[ $mr =~ ^[0-9]+$ && -n $tps ]] || { echo "run: defaults: MariaDB ($v): no figures: $(tail -2 "$W/db.log")" >&2; continue; }
			dv_rec mariadb "$v" "$r" start_s "$startup"
			dv_rec mariadb "$v" "$r" work "$(awk -v t="$tps" 'BEGIN { printf "%.4f", 1000 / t }')"
			dv_rec mariadb "$v" "$r" tps "$tps"
			dv_rec mariadb "$v" "$r" cpu_s "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
			dv_rec mariadb "$v" "$r" rss_mib "$(awk -v k="$mr" 'BEGIN { printf "%.1f", k / 1024 }')"
			dv_rec mariadb "$v" "$r" lib_ms "$(dv_lib_ms "$W/drep")"
			dv_sample_rec mariadb "$v" "$r" "$W/dsamp"
			printf '   round %d %-8s start-up %5.0f ms  %8s TPS  CPU %6.2f s  library %6.1f ms  %s\n' "$r" "$v" \
				"$(awk -v s="$startup" 'BEGIN { print s * 1000 }')" "$tps" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
				"$(dv_lib_ms "$W/drep")" "$(awk '{ printf "%.1f MiB text Pss, %s%% huge", $1 / 1024, $4 }' "$W/dsamp")"
			if dv_primes "$v"; then dirty=1; fi
		done
	done
	return 0
}

# ------------------------------------------------------------------------
# PostgreSQL: the postmaster under runstat (as the bench/run postgres
# suite's model runs it: in the foreground, a Unix socket only), the
# library in the postmaster (the backends are its forks); start-up until
# pg_isready answers, then pgbench -S on one connection; the time compared
# is seconds per 1000 transactions.
dv_postgres() {
	[[ $(id -u) -eq 0 ]] || { echo "run: defaults: PostgreSQL needs root (to run as postgres): skipped"; return 0; }
	apt_need postgresql || { echo "run: defaults: no PostgreSQL: skipped"; return 0; }
	local bin pg=$W/dpg secs=10 scale=10 warm=2
	bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
	((quick)) && { secs=3; scale=2; warm=1; }
	echo "== defaults: PostgreSQL $("$bin/postgres" --version | awk '{ print $3 }') + pgbench -S, 1 client, $secs s ($hp rounds)"
	mkdir -p "$pg" && chown postgres "$pg" && chmod 755 "$W"
	runuser -u postgres -- "$bin/initdb" -D "$pg/data" -A trust >/dev/null
	local opts=(-D "$pg/data" -k "$pg" -c listen_addresses= -c shared_buffers=256MB) gfiles=()
	mapfile -t gfiles < <(dv_files "$bin/postgres")
	dv_pg_up() {
		local k
		for k in $(seq 3000); do
			"$bin/pg_isready" -q -h "$pg" -U postgres && return 0
			kill -0 "$server_pid" 2>/dev/null || return 1
			sleep 0.02
		done
		return 1
	}
	dv_pg_stop() {
		runuser -u postgres -- "$bin/pg_ctl" -D "$pg/data" -w -m fast stop >/dev/null || kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	}
	runuser -u postgres -- "$bin/postgres" "${opts[@]}" >"$pg/init.log" 2>&1 &
	server_pid=$!
	dv_pg_up || { tail -5 "$pg/init.log"; echo "run: defaults: postgres did not start" >&2; return 1; }
	runuser -u postgres -- "$bin/pgbench" -h "$pg" -i -s "$scale" postgres >/dev/null 2>&1
	dv_pg_stop
	local r v dirty=1 order env
	for r in $(seq "$hp"); do
		dv_order "$r"
		for v in "${order[@]}"; do
			((dirty)) && "$W/cache_small" "${gfiles[@]}"
			dirty=0
			dv_rep "$W/drep"
			dv_env "$v" "$W/drep"
			local t0 t1
			t0=$(date +%s.%N)
			runuser -u postgres -- "$W/runstat" env "${env[@]}" "$bin/postgres" "${opts[@]}" >/dev/null 2>"$pg/st" &
			server_pid=$!
			dv_pg_up || { tail -5 "$pg/st"; echo "run: defaults: postgres ($v) did not start" >&2; dv_pg_stop; return 1; }
			t1=$(date +%s.%N)
			"$W/dtool" sample 250 "$server_pid" >"$W/dsamp" &
			local sp=$!
			runuser -u postgres -- "$bin/pgbench" -h "$pg" -S -T "$warm" postgres >/dev/null 2>&1
			local o tps
			o=$(timeout $((secs + 60)) runuser -u postgres -- "$bin/pgbench" -h "$pg" -S -c 1 -j 1 -T "$secs" postgres 2>/dev/null)
			tps=$(awk '/^tps = / { print $3; exit }' <<<"$o")
			dv_pg_stop
			wait "$sp" || true
			local wall user sys mr st startup
			read -r wall user sys mr st < <(tail -1 "$pg/st")
			startup=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
			[[ $mr =~ ^[0-9]+$ && -n $tps ]] || { echo "run: defaults: postgres ($v): no figures: $(tail -2 "$pg/st")" >&2; continue; }
			dv_rec postgres "$v" "$r" start_s "$startup"
			dv_rec postgres "$v" "$r" work "$(awk -v t="$tps" 'BEGIN { printf "%.4f", 1000 / t }')"
			dv_rec postgres "$v" "$r" tps "$tps"
			dv_rec postgres "$v" "$r" cpu_s "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
			dv_rec postgres "$v" "$r" rss_mib "$(awk -v k="$mr" 'BEGIN { printf "%.1f", k / 1024 }')"
			dv_rec postgres "$v" "$r" lib_ms "$(dv_lib_ms "$W/drep")"
			dv_sample_rec postgres "$v" "$r" "$W/dsamp"
			printf '   round %d %-8s start-up %5.0f ms  %10s TPS  CPU %6.2f s  library %6.1f ms  %s\n' "$r" "$v" \
				"$(awk -v s="$startup" 'BEGIN { print s * 1000 }')" "$tps" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
				"$(dv_lib_ms "$W/drep")" "$(awk '{ printf "%.1f MiB text Pss (%d processes), %s%% huge", $1 / 1024, $5, $4 }' "$W/dsamp")"
			if dv_primes "$v"; then dirty=1; fi
		done
	done
	return 0
}

# ------------------------------------------------------------------------
suite_defaults() {
	local load0 v
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	# the variants are the only ENORMOUSTEXT_* settings
	for v in $(compgen -e | grep '^ENORMOUSTEXT' || true); do
		echo "run: defaults: $v unset for this suite"
		unset "$v"
	done
	cc -O2 -o "$W/dtool" "$here/run.d/defaults-tool.c"
	local n=10 nj=5 sr=20 hp
	((quick)) && { n=3; nj=2; sr=5; }
	hp=$pairs
	((hp > 3)) && hp=3    # the long workloads: at most 3 rounds (a round of them is ~10 minutes here)
	((quick)) && hp=1
	local d=$W/dsynth
	mkdir -p "$d"
	cp "$b/bench/synth64" "$b/bench/libsynth64.so" "$d/"
	sync
	local clang_ok=0 cc cxx cfiles=() pfiles=() jfiles=() mfiles=()
	if apt_need clang; then
		clang_ok=1
		cc=$(command -v clang)
		cxx=$(command -v clang++)
		mapfile -t cfiles < <(dv_files "$cxx")
	fi
	if ((clang_ok)) && dv_want clang-version; then
		dv_short "clang --version" "$n" "${cfiles[@]}" -- "$cc" --version
		dv_spawn "clang --version" "$sr" "${cfiles[@]}" -- "$cc" --version
	fi
	local py
	py=/usr/bin/python3    # not a version manager's shim (pyenv's is a shell script)
	[[ -x $py ]] || py=$(command -v python3)
	py=$(readlink -f "$py")
	mapfile -t pfiles < <(dv_files "$py")
	! dv_want python || dv_short "python3 -c pass" "$n" "${pfiles[@]}" -- "$py" -c pass
	if dv_want probe; then
		dv_short "synth64 probe" "$n" "$d/synth64" "$d/libsynth64.so" -- "$d/synth64" 1
		dv_spawn "synth64 probe" "$sr" "$d/synth64" "$d/libsynth64.so" -- "$d/synth64" 1
	fi
	local java=""
	dv_want java && { command -v java >/dev/null || apt_need openjdk-17-jdk-headless || true
	if command -v java >/dev/null; then
		java=$(readlink -f "$(command -v java)")
		mapfile -t jfiles < <({ dv_files "$java"; find "$(dirname "$(dirname "$java")")/lib" -name libjvm.so 2>/dev/null | head -1; })
		dv_short "java -version" "$nj" "${jfiles[@]}" -- "$java" -version
	fi; }
	! dv_want synth-long || dv_synth_long "$d"
	if ((clang_ok)) && dv_want clang4; then dv_clang4 "$cxx" "${cfiles[@]}"; fi
	! dv_want mariadb || dv_mariadb
	! dv_want postgres || dv_postgres
	defaults_load="$load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	defaults_table >"$W/defaults.md"
	cat "$W/defaults.md"
}

# ------------------------------------------------------------------------
# The table: per workload and variant, medians over the rounds; the time
# ratio is per round (variant / plain of the same round), its median and
# min..max.  Then the targets of issue #32.
defaults_table() {
	local rows=$W/dflt.csv
	awk -F, '$1 == "defaults"' "$csv" >"$rows"
	echo "## defaults: the table that decides the defaults (issue #32)"
	echo
	echo "$(machine_line); load average ${defaults_load:-?}; $pairs rounds for the short programs, $hp for the rest$( ((quick)) && echo ' (--quick: fewer and shorter runs; the compiles -fsyntax-only)')."
	echo "Variants: **plain** no library; **old** the defaults before 1643354 and 2506de6 (ENORMOUSTEXT_DEFER=0 PRIME=0 COPY_MIN=0); **new** no variable; each opt-in alone on top of old: **prime** PRIME=auto, **defer** DEFER=1s, **copymin** COPY_MIN=256K (it acts only in a deferred pass: alone, it is old), **hot** HOT=auto with DEFER=1s."
	echo "Start-up: wall time of a short program (median of its runs), until the first answer for a server, the whole run otherwise.  Time vs plain: the variant's time / plain's in the same round (servers: s per 1000 transactions; synth64 long: ns per call), median and min..max over rounds; > 1 is slower.  CPU: user + sys of the process tree.  Library: the reports' cpu_ns summed over the processes (its share of the CPU).  Peak RSS: the largest process's.  Text Pss: executable mappings' Pss summed over the processes, the peak sample (one taken during a swap may hold both a window's copy and its file pages); huge: the best sample's (AnonHugePages + FilePmdMapped) / Size of those mappings.  clang++x4: the second run after dropping clang's files; the first run's figures in the line under it."
	echo "The page cache: short programs, synth64 and the servers start from their files in small folios (again after each variant that may have primed them), so a run of one variant never inherits another's huge folios; a PRIME=auto variant's later runs within its group do inherit its own."
	echo
	echo "| workload | variant | start-up | time vs plain | spread | CPU s | library ms (share) | peak RSS MiB (vs plain) | text Pss MiB | text huge | iTLB model (Golden Cove L1 / walks) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	local wl
	for wl in "clang --version" "python3 -c pass" "synth64 probe" "java -version" synth64-long clang++x4 mariadb postgres; do
		grep -q "^defaults,$wl," "$rows" || continue
		local v
		for v in "${dv_variants[@]}"; do
			grep -q "^defaults,$wl,$v," "$rows" || continue
			awk -F, -v wl="$wl" -v v="$v" -v mc="$mcsv" '
				function med(key,   n, i, j, t, a) {
					n = cnt[key]; if (!n) return ""
					for (i = 1; i <= n; i++) a[i] = val[key, i]
					for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
					return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
				}
				$2 == wl { k = $3 SUBSEP $5; val[k, ++cnt[k]] = $6; if ($5 == "work") w[$3, $4] = $6 }
				END {
					# per-round ratios to plain
					n = 0; lo = ""; hi = ""
					for (kk in w) { split(kk, p, SUBSEP); if (p[1] != v || !((("plain") SUBSEP p[2]) in w)) continue
						b = w["plain", p[2]]; if (b <= 0) continue; x = w[kk] / b; r[++n] = x
						if (lo == "" || x < lo) lo = x; if (hi == "" || x > hi) hi = x }
					for (i = 2; i <= n; i++) { t = r[i]; for (j = i - 1; j >= 1 && r[j] > t; j--) r[j + 1] = r[j]; r[j + 1] = t }
					ratio = n ? sprintf("%.3fx", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2) : "-"
					spread = n ? sprintf("%.3f..%.3f", lo, hi) : "-"
					if (v == "plain") { ratio = "1"; spread = "-" }
					s = med(v SUBSEP "start_s"); c = med(v SUBSEP "cpu_s"); l = med(v SUBSEP "lib_ms")
					m = med(v SUBSEP "rss_mib"); mp = med("plain" SUBSEP "rss_mib")
					ps = med(v SUBSEP "pss_mib"); hg = med(v SUBSEP "huge_pct")
					st = (s == "") ? "-" : (s < 1 ? sprintf("%.1f ms", s * 1000) : sprintf("%.2f s", s))
					lib = (v == "plain") ? "-" : sprintf("%.1f (%.2f%%)", l, c > 0 ? 100 * l / 1000 / c : 0)
					rss = (m == "") ? "-" : (v == "plain" ? sprintf("%.1f", m) : sprintf("%.1f (%+.1f)", m, m - mp))
					model = "n/a"
					while ((getline line < mc) > 0) {
						split(line, q, ",")
						if (q[1] == "defaults" && q[2] == wl && q[3] == v && q[4] == "goldencove")
							model = sprintf("%.0f / %.0f", q[6], q[7]) ((v != "plain" && q[10] + 0 == 0) ? " (nothing huge when it ended)" : "")
					}
					close(mc)
					printf "| %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s |\n", wl, v, st, ratio, spread, c, lib, rss,
						(ps == "") ? "-" : sprintf("%.1f", ps), (hg == "") ? "-" : sprintf("%.0f%%", hg), model
					if (wl == "clang++x4") {
						s1 = med(v SUBSEP "wall_s1"); c1 = med(v SUBSEP "cpu_s1"); l1 = med(v SUBSEP "lib_ms1")
						p1 = med(v SUBSEP "pss_mib1"); h1 = med(v SUBSEP "huge_pct1")
						printf "| ↳ first run | %s | %.2f s | | | %.2f | %s | | %s | %s | |\n", v, s1, c1,
							(v == "plain") ? "-" : sprintf("%.1f (%.2f%%)", l1, c1 > 0 ? 100 * l1 / 1000 / c1 : 0),
							(p1 == "") ? "-" : sprintf("%.1f", p1), (h1 == "") ? "-" : sprintf("%.0f%%", h1)
					}
				}' "$rows"
		done
	done
	echo
	echo "iTLB model: $(if [[ $model == yes ]]; then echo "synth64 long run only, each variant once under bench/itlb (whole process, half the calls; under Valgrind the 1 s deferral falls earlier in the run than natively); n/a elsewhere: the short programs are all start-up (and a 1 s deferral would fire inside a run Valgrind makes 20-50 times longer), the compiles, servers and the JVM would take hours for 8 variants (the clang, mariadb, postgres and java suites model plain against the old defaults)"; else echo "not run ($model_why)"; fi)."
	echo
	echo "Targets (issue #32, with the new defaults):"
	dv_target() {   # dv_target TEXT VALUE OP LIMIT FORMAT
		if [[ -z $2 ]]; then echo "- $1: not measured in this run"; return; fi
		if awk -v m="$2" -v l="$4" -v op="$3" 'BEGIN { exit !(op == "<=" ? m <= l : m >= l) }'; then
			echo "- $1: **met** ($(printf "$5" "$2"))"
		else
			echo "- $1: **not met** ($(printf "$5" "$2"))"
		fi
	}
	# dv_ratio WORKLOAD VARIANT — median per-round time ratio to plain
	dv_ratio() {
		awk -F, -v wl="$1" -v v="$2" '$2 == wl && $5 == "work" { w[$3, $4] = $6; if ($3 == v) rr[$4] = 1 }
			END { for (k in rr) if (w["plain", k] > 0) print w[v, k] / w["plain", k] }' "$rows" | median | grep -v nan || true
	}
	dv_med() { awk -F, -v wl="$1" -v v="$2" -v m="$3" '$2 == wl && $3 == v && $5 == m { print $6 }' "$rows" | median | grep -v nan || true; }
	# dv_spawn_ratio WORKLOAD — "MEDIAN LO..HI" of spawnbench's per-pair ratios
	dv_spawn_ratio() {
		awk -F, -v wl="$1" '$2 == wl && $5 == "start_us" { t[$3, $4] = $6; if ($3 == "spawn-new") k[$4] = 1 }
			END { for (i in k) if (t["spawn-plain", i] > 0) print t["spawn-new", i] / t["spawn-plain", i] }' "$rows" >"$W/dsr"
		[[ -s $W/dsr ]] && echo "$(median <"$W/dsr") $(minmax <"$W/dsr" | awk -F'[.][.]' '{ printf "%.3f..%.3f", $1, $2 }')"
		return 0
	}
	local sp
	for wl in "clang --version:1.15" "synth64 probe:1.10"; do
		local w=${wl%:*} lim=${wl##*:}
		sp=$(dv_spawn_ratio "$w")
		dv_target "$w at most ${lim}x plain, one execution of each in turn (spawnbench, median of $pairs pairs${sp:+, spread ${sp#* }})" "${sp%% *}" "<=" "$lim" "%.3fx"
		dv_target "$w at most ${lim}x plain, the table's rounds (median of the runs of each)" "$(dv_ratio "$w" new)" "<=" "$lim" "%.3fx"
	done
	local c l share
	for k in "" 1; do
		c=$(dv_med clang++x4 new "cpu_s$k") l=$(dv_med clang++x4 new "lib_ms$k")
		share=""
		[[ -n $c && -n $l ]] && share=$(awk -v c="$c" -v l="$l" 'BEGIN { printf "%.3f", 100 * l / 1000 / c }')
		dv_target "4 concurrent clang++ compiles, $([[ -z $k ]] && echo second || echo first) run: at most 1% of their CPU to the library" \
			"$share" "<=" 1 "%s%% (library $l ms of $c s)"
	done
	for wl in "clang --version" "python3 -c pass" "synth64 probe" "java -version"; do
		local a p
		a=$(dv_med "$wl" new rss_mib) p=$(dv_med "$wl" plain rss_mib)
		[[ -n $a && -n $p ]] || continue
		dv_target "$wl: peak RSS at most +2 MiB over plain" "$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.1f", a - p }')" "<=" 2 "%+.1f MiB"
	done
	local pss copy
	pss=$(dv_med clang++x4 new pss_mib) copy=$(dv_med clang++x4 new copy_mib)
	if [[ -n $pss && -n $copy && $copy != 0 ]]; then
		dv_target "4 concurrent clang++, second run: text Pss at most 1.5x one copy of clang's huge text ($copy MiB huge in one process: limit $(awk -v c="$copy" 'BEGIN { printf "%.0f", 1.5 * c }') MiB)" \
			"$(awk -v p="$pss" -v c="$copy" 'BEGIN { printf "%.2f", p / c }')" "<=" 1.5 "%sx, $pss MiB"
	else
		echo "- 4 concurrent clang++, second run: text Pss at most 1.5x one copy of clang's huge text: not measured (no huge text in the reports)"
	fi
	echo
}
