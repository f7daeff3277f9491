# model.sh — the iTLB model (bench/itlb, the Valgrind tool itlbgrind) in
# bench/run: every suite runs each variant once more under the model, which
# counts L1 iTLB misses and page walks (second-level TLB misses) of the real
# instruction stream, with each page's size taken from what the kernel
# mapped.  The counts are deterministic, so one modelled run per variant
# resolves what the timed rounds cannot.  Sourced by bench/run; uses its $b,
# $W, $root, apt_need.
#
#   model_init                  build the tool; model=yes|no, model_why
#   model_cmd NAME [--children] [--snapshots] [TOOL OPTION...]
#                               sets MODEL=(the wrapper and its options):
#                               run "${MODEL[@]}" COMMAND to model it
#   model_take SUITE CASE VARIANT NAME [PICK]
#                               reads NAME's records into $mcsv; PICK is
#                               `top` (the record with the most
#                               instructions: default) or `snap:A:B` (the
#                               counts between the snapshots labelled A and
#                               B of one process: itlbgrind --snapshot-file)
#   model_snapshot NAME LABEL PING...
#                               asks NAME's modelled server for a snapshot
#                               and waits for it (running PING meanwhile: a
#                               server that does nothing is never checked)

model=no model_why="not tried"
mcsv=$W/model.csv
echo "suite,case,variant,model,instructions,itlb_misses,walks,itlb_mpki,walk_mpki,huge_text_mib,text_mib,data_walks,data_l2_hits,est_cycles" >"$mcsv"

model_init() {
	apt_need valgrind || { model_why="valgrind is not installed"; return 0; }
	# configured again: a build folder set up before valgrind was installed
	# left the tool out
	cmake -S "$root" -B "$b" >/dev/null 2>&1 || true
	if ! cmake --build "$b" --target itlbgrind itlb_json_flat >"$W/model-build.log" 2>&1; then
		model_why="itlbgrind did not build (see bench/itlb/CMakeLists.txt; log: $(tail -1 "$W/model-build.log"))"
		return 0
	fi
	if [[ ! -x $b/bench/itlb/vglib/itlbgrind-amd64-linux ]]; then
		model_why="itlbgrind cannot be built here (Valgrind's tool headers or archives are missing)"
		return 0
	fi
	model_itlb=$b/bench/itlb/itlb
	model_flat=$b/bench/itlb/itlb_json_flat
	mkdir -p "$W/model"
	model=yes model_why=""
}

model_cmd() {
	local name=$1
	shift
	rm -f "$W/model/$name".*
	# --no-aslr: set indices follow virtual addresses; with ASLR a server's
	# second-level misses differ by up to 25% between two identical runs
	MODEL=("$model_itlb" --no-aslr -q --model="$model_cores" --json=yes --out="$W/model/$name.%p.json")
	local o
	for o in "$@"; do
		case $o in
		--children) MODEL+=(--trace-children=yes) ;;
		--snapshots) rm -f "$W/model/$name.mark"; MODEL+=(--snapshot-file="$W/model/$name.mark") ;;
		*) MODEL+=("$o") ;;
		esac
	done
}

# model_flat_line FILE N — the Nth record (a line) of FILE, flattened
# (nothing for a line that is not a whole record).  The scratch file is in
# $W, which only root writes: $W/model is open to the servers' users.
model_flat_line() {
	sed -n "${2}p" "$1" >"$W/model-one.json"
	"$model_flat" "$W/model-one.json" 2>/dev/null || true
}

# The cores modelled: BENCH_MODEL_CORES (a comma-separated list of
# itlbgrind's --model names), default goldencove,zen4.  The first is the
# one results.md's ratios use.
model_cores=${BENCH_MODEL_CORES:-goldencove,zen4}

# model_fields — from a flattened record on stdin, one line:
# "instr huge text label" and then, per core of $model_cores in order,
# "l1 walks data_walks data_l2_hits est_cycles" (est_cycles: the model's estimate for
# code and data together, from its cited costs per hit and per walk).
model_fields() {
	awk -F'\t' -v cores="$model_cores" '
		$1 == ".instructions" { i = $3 }
		$1 ~ /^\.models\[[0-9]+\]\./ {
			split($1, p, /[][]/); f = substr($1, length(p[1]) + length(p[2]) + 4)
			if (f == "name") nm[p[2]] = $3
			else if (f == "itlb_misses") l1[p[2]] = $3
			else if (f == "stlb_misses") w[p[2]] = $3
			else if (f == "data_walks") dw[p[2]] = $3
			else if (f == "data_l2_hits") dh[p[2]] = $3
			else if (f == "estimated_cycles") ec[p[2]] += $3
			else if (f == "data_estimated_cycles") ec[p[2]] += $3
		}
		$1 ~ /^\.objects\[[0-9]+\]\.huge_text_bytes$/ { h += $3 }
		$1 ~ /^\.objects\[[0-9]+\]\.text_bytes$/ && $1 !~ /huge/ { t += $3 }
		$1 == ".label" { lab = $3 }
		END {
			if (i == "") exit    # not a record
			gsub(/[ \t]/, "_", lab)
			printf "%.0f %.0f %.0f %s", i, h, t, (lab == "" ? "-" : lab)
			n = split(cores, c, ",")
			for (j = 1; j <= n; j++) {
				k = ""
				for (x in nm) if (nm[x] == c[j]) k = x
				printf " %.0f %.0f %.0f %.0f %.0f", l1[k] + 0, w[k] + 0, dw[k] + 0, dh[k] + 0, ec[k] + 0
			}
			printf "\n"
		}'
}

model_take() {
	local suite=$1 case=$2 variant=$3 name=$4 pick=${5:-top}
	local f n k best="" bi=-1 line
	[[ $model == yes ]] || return 0
	shopt -s nullglob
	local files=("$W/model/$name".*.json)
	shopt -u nullglob
	if ((${#files[@]} == 0)); then
		echo "   model: no record for $suite/$variant ($name)" >&2
		return 0
	fi
	local x y i
	if [[ $pick == top ]]; then
		for f in "${files[@]}"; do
			n=$(wc -l <"$f")
			for k in $(seq "$n"); do
				line=$(model_flat_line "$f" "$k" | model_fields) || true
				[[ $line =~ ^[0-9]+\  ]] || continue
				i=${line%% *}
				if ((i > bi)); then bi=$i best=$line; fi
			done
		done
	else
		local a=${pick#snap:}
		local bl=${a#*:}
		a=${a%%:*}
		local ra="" rb="" lab
		for f in "${files[@]}"; do
			n=$(wc -l <"$f")
			for k in $(seq "$n"); do
				line=$(model_flat_line "$f" "$k" | model_fields) || true
				[[ $line =~ ^[0-9]+\  ]] || continue
				read -r -a x <<<"$line"
				lab=${x[3]}
				[[ $lab == "$a" ]] && ra=$line
				[[ $lab == "$bl" ]] && rb=$line
			done
		done
		if [[ -z $ra || -z $rb ]]; then
			echo "   model: $suite/$variant: no snapshots '$a' and '$bl' ($name)" >&2
			return 0
		fi
		read -r -a x <<<"$ra"
		read -r -a y <<<"$rb"
		# counts between the snapshots; the text (huge, total) as at the second
		best="$((y[0] - x[0])) ${y[1]} ${y[2]} -"
		for ((k = 4; k < ${#y[@]}; k++)); do best+=" $((y[k] - x[k]))"; done
	fi
	[[ -n $best ]] || { echo "   model: $suite/$variant: no usable record ($name)" >&2; return 0; }
	awk -v s="$suite" -v c="$case" -v v="$variant" -v r="$best" -v cores="$model_cores" 'BEGIN {
		split(r, f, " "); i = f[1]; h = f[2]; t = f[3]
		k = i > 0 ? i / 1000 : 1    # %.0f, not %d: mawk caps %d at 2^31 - 1
		n = split(cores, cn, ",")
		for (j = 1; j <= n; j++) {
			o = 4 + (j - 1) * 5
			printf "%s,%s,%s,%s,%.0f,%.0f,%.0f,%.4f,%.4f,%.1f,%.1f,%.0f,%.0f,%.0f\n", s, c, v, cn[j], i, f[o + 1], f[o + 2],
				f[o + 1] / k, f[o + 2] / k, h / 1048576, t / 1048576, f[o + 3], f[o + 4], f[o + 5]
		}
	}' >>"$mcsv"
	awk -v v="$variant" -v r="$best" -v cores="$model_cores" 'BEGIN {
		split(r, f, " "); i = f[1]; h = f[2]
		k = i > 0 ? i / 1000 : 1
		printf "   model %-10s %6.2f G instr;", v, i / 1e9
		n = split(cores, cn, ",")
		for (j = 1; j <= n; j++) {
			o = 4 + (j - 1) * 5
			printf " %s L1 %.3f MPKI, walks %.4f (data %.4f) MPKI;", cn[j], f[o + 1] / k, f[o + 2] / k, f[o + 3] / k
		}
		printf " %.0f MiB text huge\n", h / 1048576
	}'
}

model_snapshot() {
	local name=$1 label=$2
	shift 2
	local before
	before=$(cat "$W/model/$name".*.json 2>/dev/null | grep -c "\"label\":\"$label\"" || true)
	echo "$label" >"$W/model/$name.mark"
	local k
	for k in $(seq 600); do
		local now
		now=$(cat "$W/model/$name".*.json 2>/dev/null | grep -c "\"label\":\"$label\"" || true)
		((now > before)) && return 0
		"$@" >/dev/null 2>&1 || true
		sleep 0.1
	done
	echo "   model: no snapshot '$label' after 60 s ($name)" >&2
	return 1
}
