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
echo "suite,case,variant,model,instructions,itlb_misses,walks,itlb_mpki,walk_mpki,huge_text_mib,text_mib" >"$mcsv"

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
	MODEL=("$model_itlb" --no-aslr -q --model=goldencove,zen4 --json=yes --out="$W/model/$name.%p.json")
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

# model_fields — from a flattened record on stdin: "instr gc_l1 gc_walks z_l1 z_walks huge text label"
model_fields() {
	awk -F'\t' '
		$1 == ".instructions" { i = $3 }
		$1 ~ /^\.models\[[0-9]+\]\.name$/ { split($1, p, /[][]/); nm[p[2]] = $3 }
		$1 ~ /^\.models\[[0-9]+\]\.itlb_misses$/ { split($1, p, /[][]/); l1[p[2]] = $3 }
		$1 ~ /^\.models\[[0-9]+\]\.stlb_misses$/ { split($1, p, /[][]/); w[p[2]] = $3 }
		$1 ~ /^\.objects\[[0-9]+\]\.huge_text_bytes$/ { h += $3 }
		$1 ~ /^\.objects\[[0-9]+\]\.text_bytes$/ && $1 !~ /huge/ { t += $3 }
		$1 == ".label" { lab = $3 }
		END {
			for (k in nm) { if (nm[k] == "goldencove") g = k; if (nm[k] == "zen4") z = k }
			if (i == "") exit    # not a record
			gsub(/[ \t]/, "_", lab)
			printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %s\n", i, l1[g] + 0, w[g] + 0, l1[z] + 0, w[z] + 0, h, t, (lab == "" ? "-" : lab)
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
	local i g1 gw z1 zw h t lab
	if [[ $pick == top ]]; then
		for f in "${files[@]}"; do
			n=$(wc -l <"$f")
			for k in $(seq "$n"); do
				i=""
				read -r i g1 gw z1 zw h t lab < <(model_flat_line "$f" "$k" | model_fields) || true
				if [[ $i =~ ^[0-9]+$ ]] && ((i > bi)); then bi=$i best="$i $g1 $gw $z1 $zw $h $t"; fi
			done
		done
	else
		local a=${pick#snap:}
		local bl=${a#*:}
		a=${a%%:*}
		local ra="" rb=""
		for f in "${files[@]}"; do
			n=$(wc -l <"$f")
			for k in $(seq "$n"); do
				line=$(model_flat_line "$f" "$k" | model_fields) || true
				[[ $line =~ ^[0-9]+\  ]] || continue
				lab=${line##* }
				[[ $lab == "$a" ]] && ra=$line
				[[ $lab == "$bl" ]] && rb=$line
			done
		done
		if [[ -z $ra || -z $rb ]]; then
			echo "   model: $suite/$variant: no snapshots '$a' and '$bl' ($name)" >&2
			return 0
		fi
		local x y
		read -r -a x <<<"$ra"
		read -r -a y <<<"$rb"
		best="$((y[0] - x[0])) $((y[1] - x[1])) $((y[2] - x[2])) $((y[3] - x[3])) $((y[4] - x[4])) ${y[5]} ${y[6]}"
	fi
	[[ -n $best ]] || { echo "   model: $suite/$variant: no usable record ($name)" >&2; return 0; }
	read -r i g1 gw z1 zw h t <<<"$best"
	awk -v s="$suite" -v c="$case" -v v="$variant" -v i="$i" -v g1="$g1" -v gw="$gw" -v z1="$z1" -v zw="$zw" \
	    -v h="$h" -v t="$t" 'BEGIN {
		k = i > 0 ? i / 1000 : 1    # %.0f, not %d: mawk caps %d at 2^31 - 1
		printf "%s,%s,%s,goldencove,%.0f,%.0f,%.0f,%.4f,%.4f,%.1f,%.1f\n", s, c, v, i, g1, gw, g1 / k, gw / k, h / 1048576, t / 1048576
		printf "%s,%s,%s,zen4,%.0f,%.0f,%.0f,%.4f,%.4f,%.1f,%.1f\n", s, c, v, i, z1, zw, z1 / k, zw / k, h / 1048576, t / 1048576
	}' >>"$mcsv"
	awk -v v="$variant" -v i="$i" -v g1="$g1" -v gw="$gw" -v z1="$z1" -v zw="$zw" -v h="$h" 'BEGIN {
		k = i > 0 ? i / 1000 : 1
		printf "   model %-10s %6.2f G instr; goldencove L1 %.3f MPKI, walks %.4f MPKI; zen4 L1 %.3f, walks %.4f; %.0f MiB text huge\n",
			v, i / 1e9, g1 / k, gw / k, z1 / k, zw / k, h / 1048576
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
