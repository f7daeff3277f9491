#!/bin/bash
# tool_stat_saved — `stat --proc` on a written smaps with every kind (anon,
# file, shmem, hugetlb), a hugetlb copy `/anon_hugepage (deleted)`, an
# anonymous copy, unattributable anonymous text, `[anon:...]`, `[vdso]`, a
# path with a space, non-executable huge memory left out: every figure exact,
# the text output too.
. "$(dirname "$0")/lib.sh"

# A saved smaps with every kind and every attribution case (see README).
d=$W/proc/4242
mkdir -p "$d"
echo app >"$d/comm"
kb() { printf 'Size: 0 kB\nAnonHugePages: %d kB\nShmemPmdMapped: %d kB\nFilePmdMapped: %d kB\nShared_Hugetlb: %d kB\nPrivate_Hugetlb: %d kB\n' "$@"; }
{
	echo "555500000000-555500001000 r--p 00000000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
	echo "555500001000-555500200000 r-xp 00001000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
	echo "555500200000-555500400000 r-xp 00000000 00:00 0 "; kb 2048 0 0 0 0
	echo "555500400000-555500600000 r-xp 00000000 00:0f 5000                       /anon_hugepage (deleted)"; kb 0 0 0 0 2048
	echo "555500600000-555500700000 r-xp 00600000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
	echo "555500700000-555500800000 r--p 00700000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
	echo "555500800000-555500c00000 rw-p 00000000 00:00 0                          [heap]"; kb 4096 0 0 0 0
	echo "7f0000000000-7f0000400000 r-xp 00000000 fe:00 200                        /opt/app/lib/lib big.so"; kb 0 0 4096 0 0
	echo "7f0000400000-7f0000500000 r--p 00400000 fe:00 200                        /opt/app/lib/lib big.so"; kb 0 0 0 0 0
	echo "7f0000600000-7f0000800000 r-xs 00000000 00:01 300                        /memfd:jit (deleted)"; kb 0 2048 0 0 0
	echo "7f0000a00000-7f0000a01000 r-xp 00000000 00:00 0 "; kb 0 0 0 0 0
	echo "7f0000b00000-7f0000b02000 r-xp 00000000 00:00 0                          [anon:jit]"; kb 0 0 0 0 0
	echo "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]"; kb 0 0 0 0 0
} >"$d/smaps"
t saved -- "$TOOL" stat --json --proc "$W/proc" 4242
expect_rc 0; expect_no_err; json "$OUT"
cat >"$W/expected" <<-EOF
.pid	number	4242
.command	string	app
.text_bytes	number	$((0x1ff000 + 0x200000 + 0x200000 + 0x100000 + 0x400000 + 0x200000 + 0x1000 + 0x2000 + 0x2000))
.huge_bytes	number	$((10 << 20))
.huge_by_kind.anon	number	$((2 << 20))
.huge_by_kind.file	number	$((4 << 20))
.huge_by_kind.shmem	number	$((2 << 20))
.huge_by_kind.hugetlb	number	$((2 << 20))
.objects[0].path	string	/opt/app/bin/app
.objects[0].kind	string	file
.objects[0].text_bytes	number	$((0x1ff000 + 0x200000 + 0x200000 + 0x100000))
.objects[0].huge_bytes	number	$((4 << 20))
.objects[0].huge_by_kind.anon	number	$((2 << 20))
.objects[0].huge_by_kind.file	number	0
.objects[0].huge_by_kind.shmem	number	0
.objects[0].huge_by_kind.hugetlb	number	$((2 << 20))
.objects[0].copied_text_bytes	number	$((4 << 20))
.objects[0].mappings	number	4
.objects[1].path	string	/opt/app/lib/lib big.so
.objects[1].kind	string	file
.objects[1].text_bytes	number	$((4 << 20))
.objects[1].huge_bytes	number	$((4 << 20))
.objects[1].huge_by_kind.anon	number	0
.objects[1].huge_by_kind.file	number	$((4 << 20))
.objects[1].huge_by_kind.shmem	number	0
.objects[1].huge_by_kind.hugetlb	number	0
.objects[1].copied_text_bytes	number	0
.objects[1].mappings	number	1
.objects[2].path	string	/memfd:jit (deleted)
.objects[2].kind	string	jit
.objects[2].text_bytes	number	$((2 << 20))
.objects[2].huge_bytes	number	$((2 << 20))
.objects[2].huge_by_kind.anon	number	0
.objects[2].huge_by_kind.file	number	0
.objects[2].huge_by_kind.shmem	number	$((2 << 20))
.objects[2].huge_by_kind.hugetlb	number	0
.objects[2].copied_text_bytes	number	0
.objects[2].mappings	number	1
.objects[3].path	string	[anonymous]
.objects[3].kind	string	jit
.objects[3].text_bytes	number	$((0x1000 + 0x2000))
.objects[3].huge_bytes	number	0
.objects[3].huge_by_kind.anon	number	0
.objects[3].huge_by_kind.file	number	0
.objects[3].huge_by_kind.shmem	number	0
.objects[3].huge_by_kind.hugetlb	number	0
.objects[3].copied_text_bytes	number	0
.objects[3].mappings	number	2
.objects[4].path	string	[vdso]
.objects[4].kind	string	pseudo
.objects[4].text_bytes	number	$((0x2000))
.objects[4].huge_bytes	number	0
.objects[4].huge_by_kind.anon	number	0
.objects[4].huge_by_kind.file	number	0
.objects[4].huge_by_kind.shmem	number	0
.objects[4].huge_by_kind.hugetlb	number	0
.objects[4].copied_text_bytes	number	0
.objects[4].mappings	number	1
EOF
diff -u "$W/expected" "$OUT.flat" || fail "the saved smaps gave other figures (diff above)"
t text -- "$TOOL" stat --proc "$W/proc" 4242
expect_rc 0
expect_out '^PID 4242 \(app\): 13.0M of text, 10M on huge pages \(77%\): anon 2M, file 4M, shmem 2M, hugetlb 2M$'
expect_out '^ +7.0M +4M +2M +0 +0 +2M  /opt/app/bin/app \(4M of it in anonymous copies\)$'
t missing -- "$TOOL" stat --proc "$W/proc" 4243
expect_bad 1 "a PID not in the saved tree" "PID 4243: no such process"

pass
