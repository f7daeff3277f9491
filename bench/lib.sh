# bench/lib.sh — what the benchmark scripts share (sourced, not run).
#
# The caller sets: root (the source tree), W (its scratch directory, removed
# at exit), and before using the servers, lib (libenormoustext.so).

# median / minmax of numbers on stdin, one a line
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }

# bench_tools — build runstat and cache_small into $W
bench_tools() {
	cc -O2 -o "$W/runstat" "$root/bench/zero-copy.d/runstat.c"
	cc -O2 -o "$W/cache_small" "$root/bench/zero-copy.d/cache_small.c"
}

# machine_line — the header every result file starts with
machine_line() {
	echo "$(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)," \
		"THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)" \
		"(defrag $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/defrag))," \
		"libenormoustext $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
}

# have_itlb — does perf count iTLB misses here (a hardware PMU)?
have_itlb() {
	command -v perf >/dev/null && perf stat -x, -e iTLB-load-misses true 2>&1 >/dev/null | grep -q '^[0-9]'
}

# text_pss PID — "PSS HUGE": Pss and huge bytes of its r-x mappings, in MiB
text_pss() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { x = ($2 ~ /^r-x/) } x && /^Pss:/ { p += $2 }
	     x && /^(AnonHugePages|FilePmdMapped):/ { h += $2 }
	     END { printf "%.1f %.1f", p / 1024, h / 1024 }' "/proc/$1/smaps"
}

# apt_need PACKAGE... — install what is missing (root only; else say so)
apt_need() {
	local miss=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || miss+=("$p")
	done
	((${#miss[@]})) || return 0
	if [[ $(id -u) -ne 0 ]]; then
		echo "bench: ${miss[*]} missing and not root: cannot install" >&2
		return 1
	fi
	echo "bench: installing ${miss[*]} (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${miss[@]}" >/dev/null
}

# ---- MariaDB: a private server on a Unix socket (no network), in $W/db ----
mysqld=/usr/sbin/mariadbd
db_dir() { echo "$W/db"; }
db_sock() { echo "$W/db.sock"; }
server_pid=""

mariadb_init() {
	mkdir -p "$(db_dir)"
	mariadb-install-db --no-defaults --datadir="$(db_dir)" --user=root --auth-root-authentication-method=normal \
		--skip-test-db >/dev/null 2>&1
}

# mariadb_start [VAR=VALUE...] — sets server_pid and startup (seconds until
# it answers).  server_wrap=(...) runs the server under a command (the iTLB
# model), server_flags=(...) adds options, server_wait=N waits N/20 s (30 s);
# server_fatal=0: a server that does not start returns 1 (default: exit).
server_wrap=() server_flags=() server_wait=600
mariadb_start() {
	local t0 t1 sock
	sock=$(db_sock)
	t0=$(date +%s.%N)
	env "$@" ${server_wrap[@]+"${server_wrap[@]}"} "$mysqld" --no-defaults --datadir="$(db_dir)" --socket="$sock" \
		--skip-networking --user=root --innodb-buffer-pool-size=256M --skip-log-bin \
		${server_flags[@]+"${server_flags[@]}"} >"$W/db.log" 2>&1 &
	server_pid=$!
	for _ in $(seq "$server_wait"); do
		mariadb-admin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	t1=$(date +%s.%N)
	startup=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	[[ -S $sock ]] || { cat "$W/db.log"; echo "bench: mariadbd did not start" >&2; ((${server_fatal:-1} == 0)) || exit 1; return 1; }
}

mariadb_stop() {
	mariadb-admin --no-defaults --socket="$(db_sock)" -uroot shutdown >/dev/null 2>&1 || kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
}

# sysbench against that server: sysbench_cmd ARGS... (never more than 10 minutes)
# BENCH_SB_TABLES x BENCH_SB_TABLE_SIZE rows (default 4 x 20,000: about
# 20 MiB of data; larger sets put the data side of the TLB under pressure)
sysbench_cmd() {
	timeout 1800 sysbench --db-driver=mysql --mysql-socket="$(db_sock)" --mysql-user=root --mysql-db=sbtest \
		--tables="${BENCH_SB_TABLES:-4}" --table-size="${BENCH_SB_TABLE_SIZE:-20000}" "$@"
}

mariadb_prepare() {
	mariadb_start
	mariadb --no-defaults --socket="$(db_sock)" -uroot -e 'CREATE DATABASE IF NOT EXISTS sbtest'
	sysbench_cmd oltp_read_write prepare >/dev/null
	mariadb_stop
}

# the scripts' own servers never outlive them
bench_cleanup() {
	[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	pkill -f -- "--datadir=$W/db" 2>/dev/null || true
	pkill -f -- "$W/pg" 2>/dev/null || true
	pkill -f -- "$W/redis" 2>/dev/null || true
	rm -rf "$W"
}
