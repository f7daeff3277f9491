#!/bin/bash
# pmu-validate.sh — itlbgrind's model against the real iTLB counters, on a
# machine that has a hardware PMU.
#
#   pmu-validate.sh --itlb BUILD/bench/itlb/itlb --pages BUILD/bench/itlb/itlb_pages
#                   [--model NAME] [--iters N]
#
# Runs the known-answer loops of test.sh natively under
#   perf stat -e iTLB-load-misses,itlb_misses.walk_completed,instructions
# (plus the vendor's first-level events where perf knows them: Intel
# itlb_misses.stlb_hit, AMD bp_l1_tlb_miss_l2_tlb_hit/_miss), for N and 2N
# iterations, and prints the per-iteration difference next to the model's
# (the same difference under itlbgrind): model vs real, side by side.  The
# model is picked from /proc/cpuinfo unless --model says.  User-space counts
# only (:u); the real counts include whatever else the core fetched (the
# loop's own C caller, interrupts' return paths), so expect real >= model
# where the model says 0, and the same order where it says N.
#
# Without a hardware PMU (this project's development machines: perf has
# software events only) it says so and exits 77.
set -u

ITLB= PAGES= MODEL= ITERS=20000
while (($#)); do
	case $1 in
	--itlb) ITLB=$2; shift 2 ;;
	--pages) PAGES=$2; shift 2 ;;
	--model) MODEL=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	*) echo "pmu-validate.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -x $ITLB && -x $PAGES ]] || { echo "usage: pmu-validate.sh --itlb PATH --pages PATH [--model NAME] [--iters N]" >&2; exit 2; }
command -v perf >/dev/null || { echo "pmu-validate.sh: perf is not installed: nothing to compare"; exit 77; }

tmp=$(mktemp -d /tmp/itlb-pmu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Is there a PMU at all?  perf prints "<not supported>" for hardware events
# that the machine (or the hypervisor) does not give it.
perf stat -x, -e instructions:u,iTLB-load-misses:u -o "$tmp/probe" true 2>/dev/null
if ! [[ -s $tmp/probe ]] || grep -q 'not supported\|not counted' "$tmp/probe" ||
   ! grep -q '^[0-9]' "$tmp/probe"; then
	echo "pmu-validate.sh: this machine has no hardware PMU (perf counts instructions and iTLB misses as" \
	     "'not supported'): there are no real counts to compare the model with.  Run it on bare metal" \
	     "or a VM with a virtual PMU."
	exit 77
fi

vendor=$(awk -F': ' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
family=$(awk -F': ' '/^cpu family/ { print $2; exit }' /proc/cpuinfo)
cpumodel=$(awk -F': ' '/^model\t/ { print $2; exit }' /proc/cpuinfo)
if [[ -z $MODEL ]]; then
	case $vendor:$family:$cpumodel in
	GenuineIntel:6:143|GenuineIntel:6:151|GenuineIntel:6:154|GenuineIntel:6:183|GenuineIntel:6:186|GenuineIntel:6:191|GenuineIntel:6:207)
		MODEL=goldencove ;;   # Sapphire/Emerald Rapids, Alder Lake, Raptor Lake
	GenuineIntel:6:85|GenuineIntel:6:94|GenuineIntel:6:78|GenuineIntel:6:142|GenuineIntel:6:158|GenuineIntel:6:165)
		MODEL=skylake ;;      # Skylake(-SP), Cascade Lake, Kaby/Coffee/Comet Lake
	AuthenticAMD:23:*)
		MODEL=zen3 ;;         # Zen 2 (the zen3 model covers Zen 2 and 3)
	AuthenticAMD:25:*)
		# family 19h: Zen 4 is models 10h-1Fh, 60h-7Fh, A0h-AFh; the rest Zen 3
		if (( (cpumodel >= 16 && cpumodel <= 31) || (cpumodel >= 96 && cpumodel <= 127) ||
		      (cpumodel >= 160 && cpumodel <= 175) )); then MODEL=zen4; else MODEL=zen3; fi ;;
	*)
		echo "pmu-validate.sh: no model for $vendor family $family model $cpumodel: name one with --model" >&2
		exit 2 ;;
	esac
fi

# The events this perf knows, from the ones asked for.
events=(instructions:u iTLB-load-misses:u)
have() { perf list 2>/dev/null | grep -qiw "$1"; }
for e in itlb_misses.walk_completed itlb_misses.stlb_hit bp_l1_tlb_miss_l2_tlb_hit bp_l1_tlb_miss_l2_tlb_miss; do
	have "$e" && events+=("$e:u")
done
evlist=$(IFS=,; echo "${events[*]}")
echo "pmu-validate.sh: $vendor family $family model $cpumodel, model '$MODEL', events $evlist"

# real EVENT-FILE: value of an event from perf -x, output.
real() { awk -F, -v e="$2" '$3 == e || $3 == e":u" { print $1; exit }' "$1"; }

K=4096 M=$((2 << 20)) G=$((256 << 20))
printf '%-14s %-18s %14s %14s %14s %14s\n' case "" "model L1 miss" "real L1 miss" "model walks" "real walks"
for spec in "small-64 64 $K small" "small-257 257 $K small" "small-1024 1024 $K small" "small-4096 4096 $K small" \
            "small-17x2M 17 $M small" "huge-4096 4096 $K huge" "huge-40x2M 40 $M huge" "huge-72x2M 72 $M huge" \
            "huge-33x256M 33 $G huge"; do
	read -r name n stride backing <<< "$spec"
	args=(--pages "$n" --stride "$stride" --backing "$backing")
	ok=1
	for it in "$ITERS" $((2 * ITERS)); do
		perf stat -x, -e "$evlist" -o "$tmp/perf.$it" "$PAGES" "${args[@]}" --iters "$it" > /dev/null 2> "$tmp/err" || ok=0
		"$ITLB" -q --model="$MODEL" --json=yes --out="$tmp/model.$it" "$PAGES" "${args[@]}" --iters "$it" \
			> /dev/null 2>> "$tmp/err" || ok=0
	done
	if ((!ok)); then
		printf '%-14s skipped: %s\n' "$name" "$(tail -1 "$tmp/err")"
		rm -f "$tmp"/model.*
		continue
	fi
	jnum() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1" | head -1; }
	ml1=$(( ($(jnum "$tmp/model.$((2 * ITERS))" itlb_misses) - $(jnum "$tmp/model.$ITERS" itlb_misses)) / ITERS ))
	mw=$(( ($(jnum "$tmp/model.$((2 * ITERS))" stlb_misses) - $(jnum "$tmp/model.$ITERS" stlb_misses)) / ITERS ))
	a=$tmp/perf.$ITERS b=$tmp/perf.$((2 * ITERS))
	per() { local x y; x=$(real "$a" "$1") y=$(real "$b" "$1"); [[ $x =~ ^[0-9]+$ && $y =~ ^[0-9]+$ ]] && echo $(( (y - x) / ITERS )) || echo "n/a"; }
	if have itlb_misses.walk_completed; then
		rw=$(per itlb_misses.walk_completed)
		sh=$(per itlb_misses.stlb_hit)
		[[ $rw != n/a && $sh != n/a ]] && rl1=$((rw + sh)) || rl1=n/a
	elif have bp_l1_tlb_miss_l2_tlb_miss; then
		rw=$(per bp_l1_tlb_miss_l2_tlb_miss)
		h=$(per bp_l1_tlb_miss_l2_tlb_hit)
		[[ $rw != n/a && $h != n/a ]] && rl1=$((rw + h)) || rl1=n/a
	else
		rw=$(per iTLB-load-misses) rl1=n/a
	fi
	printf '%-14s %-18s %14s %14s %14s %14s\n' "$name" "per iteration" "$ml1" "$rl1" "$mw" "$rw"
	rm -f "$tmp"/model.* "$tmp"/perf.*
done
