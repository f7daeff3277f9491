// node-bigcode.js — a JavaScript workload with a lot of hot JIT code for
// bench/run's jit suite: N functions made at run time (new Function), each
// S statements of straight-line 32-bit integer arithmetic with constants of
// its own (no two alike; too big for TurboFan to inline), called
// round-robin.  Warm-up rounds run for at least MIN seconds and until
// V8's code has not grown for QUIET seconds (v8.getHeapCodeStatistics:
// TurboFan has compiled what it will; it starts late, after many calls,
// and before it the code does not grow either: hence MIN), then the file
// MARK is created (the steady state has begun) and ROUNDS timed rounds run.
//
//   node node-bigcode.js N S MIN QUIET ROUNDS [MARK]
//
// Prints "checksum C seconds T rounds R warmup_rounds W warmup_seconds WS
// code_mib M" (M: V8's code and metadata at the end).
'use strict';
const fs = require('fs');
const v8 = require('v8');
const [n, s, min, quiet, rounds] = process.argv.slice(2, 7).map(Number);
const mark = process.argv[7];
let seed = 1;
const rnd = (m) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed % m; };
const fns = [];
for (let i = 0; i < n; i++) {
	let body = '';
	for (let j = 0; j < s; j++)
		body += `x = (Math.imul(x, ${2 * rnd(1000000) + 3}) ^ (x >> ${1 + rnd(30)})) + ${rnd(1000000)} | 0;\n`;
	fns.push(new Function('x', body + 'return x | 0;'));
}
function round(x) {
	for (let i = 0; i < fns.length; i++) x = fns[i](x);
	return x;
}
const now = () => Number(process.hrtime.bigint()) / 1e9;
const code = () => v8.getHeapCodeStatistics().code_and_metadata_size;
let x = 1, w = 0, size = -1;
const t0 = now();
let last = t0;
for (;;) {
	x = round(x);
	w++;
	const c = code(), t = now();
	if (c !== size) { size = c; last = t; } else if (t - last > quiet && t - t0 > min) break;
}
const t1 = now();
if (mark) fs.writeFileSync(mark, '');
for (let r = 0; r < rounds; r++) x = round(x);
const t2 = now();
console.log(`checksum ${x} seconds ${(t2 - t1).toFixed(4)} rounds ${rounds} warmup_rounds ${w} warmup_seconds ${(t1 - t0).toFixed(3)} code_mib ${(code() / 1048576).toFixed(1)}`);
