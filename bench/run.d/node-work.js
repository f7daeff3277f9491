// node-work.js — a CPU-bound JavaScript workload for bench/run's Node suite:
// a mix of what servers do (JSON, regular expressions, strings, maps,
// closures), a few seconds long.  Prints a checksum and its own time.
'use strict';
const t0 = process.hrtime.bigint();
const rounds = Number(process.argv[2] || 40);
let sum = 0;
for (let r = 0; r < rounds; r++) {
	const objs = [];
	for (let i = 0; i < 20000; i++)
		objs.push({ id: i, name: 'item' + i, tags: ['a' + (i % 7), 'b' + (i % 11)], v: Math.sqrt(i) });
	const text = JSON.stringify(objs);
	const back = JSON.parse(text);
	const m = new Map();
	for (const o of back) {
		const k = o.tags.join('-');
		m.set(k, (m.get(k) || 0) + o.v);
	}
	const re = /item(\d+)7"/g;
	let hits = 0;
	while (re.exec(text) !== null) hits++;
	const words = text.slice(0, 200000).split(/[,:{}\[\]"]+/).filter(w => w.length > 3);
	words.sort();
	sum = (sum + hits + m.size + words.length + Math.floor([...m.values()].reduce((a, b) => a + b, 0))) % 1000000007;
}
const dt = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`checksum ${sum} seconds ${dt.toFixed(3)}`);
