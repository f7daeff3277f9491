#!/bin/bash
# tool_systemd_example — examples/systemd/mariadb-hugetext.conf is a valid
# drop-in: its [Service] lines in a unit, checked by systemd-analyze (no
# warning); enormoustext-prometheus.service and .timer are valid units (the
# timer every 30 s), the service writes into Debian's textfile directory of
# prometheus-node-exporter (its default, where that is installed), and its
# command line, run here into another file, writes metrics.
. "$(dirname "$0")/lib.sh"

command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
ex=$TT_SRC/../../examples/systemd/mariadb-hugetext.conf
{ printf '[Unit]\nDescription=check\n[Service]\nExecStart=/bin/true\n'
  sed -n '/^\[Service\]/,$p' "$ex" | tail -n +2; } >"$W/hugetext-check.service"
grep -q '^ExecStartPre=.*enormoustext prime ' "$W/hugetext-check.service" || fail "the example has no ExecStartPre prime line"
grep -q '^Environment=LD_PRELOAD=.*libenormoustext.so' "$W/hugetext-check.service" || fail "the example does not preload the library"
t verify -- systemd-analyze verify "$W/hugetext-check.service"
expect_rc 0 "systemd-analyze verify"
[ ! -s "$ERR" ] || fail "systemd-analyze has something to say: $(head -3 "$ERR")"
# the command line it runs is a valid one (here on a file of ours)
cmd=$(sed -n 's/^ExecStartPre=-\/usr\/local\/bin\/enormoustext //p' "$ex")
[ -n "$cmd" ] || fail "cannot read the ExecStartPre command"
bigdso big.so
# shellcheck disable=SC2086 # the command's words
t run -- "$TOOL" ${cmd%% *} --check "$W/big.so"
expect_rc 0 "enormoustext ${cmd%% *} from the example"

# The Prometheus units: verified (the command at this build's path), the
# timer's period, the output where node_exporter reads.
ps=$TT_SRC/../../examples/systemd/enormoustext-prometheus.service
pt=$TT_SRC/../../examples/systemd/enormoustext-prometheus.timer
sed "s|/usr/local/bin/enormoustext|$TOOL|" "$ps" >"$W/enormoustext-prometheus.service"
cp "$pt" "$W/enormoustext-prometheus.timer"
t verify.prom -- systemd-analyze verify --man=no "$W/enormoustext-prometheus.service" "$W/enormoustext-prometheus.timer"
expect_rc 0 "systemd-analyze verify the Prometheus units"
[ ! -s "$ERR" ] || fail "systemd-analyze has something to say of the Prometheus units: $(head -3 "$ERR")"
grep -qx 'OnUnitActiveSec=30s' "$pt" || fail "the timer does not run the service every 30 s"
pcmd=$(sed -n 's|^ExecStart=/usr/local/bin/enormoustext ||p' "$ps")
dir=/var/lib/prometheus/node-exporter
[ "$pcmd" = "stat --prometheus --all -o $dir/enormoustext.prom" ] || fail "the service runs '$pcmd'"
grep -qx "ReadWritePaths=$dir" "$ps" || fail "the service may not write $dir"
if command -v prometheus-node-exporter >/dev/null; then
	prometheus-node-exporter --help 2>&1 | grep -q -- "--collector.textfile.directory=\"$dir\"" ||
		fail "prometheus-node-exporter's textfile directory is not $dir: $(prometheus-node-exporter --help 2>&1 | grep textfile.directory)"
else
	note "prometheus-node-exporter is not installed: its default textfile directory ($dir) not checked"
fi
# shellcheck disable=SC2086 # the command's words
umask 022   # the service's UMask=
t prom -- "$TOOL" ${pcmd% -o *} -o "$W/enormoustext.prom"
expect_rc 0 "the service's command"; expect_no_err
grep -q '^# TYPE enormoustext_process_text_bytes gauge$' "$W/enormoustext.prom" || fail "the service's command wrote no process metrics"
[ "$(stat -c %a "$W/enormoustext.prom")" = 644 ] || fail "the metrics file is not 0644: node_exporter could not read it"

pass
