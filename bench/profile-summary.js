import { readFileSync } from 'node:fs';
const file = process.argv[2];
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
const counts = new Map();
for (let i = 0; i < p.samples.length; i++) { counts.set(p.samples[i], (counts.get(p.samples[i]) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; }
// self time by function
const agg = new Map();
for (const [id, t] of counts) { const n = byId.get(id); const cf = n.callFrame; const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*\/(node_modules|src|dist)\//, '$1/')}:${cf.lineNumber}`; agg.set(key, (agg.get(key) ?? 0) + t); }
// inclusive time by file
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of counts) { const seen = new Set(); let cur = id; while (cur !== undefined) { const n = byId.get(cur); const cf = n.callFrame; const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*\/(node_modules|src|dist)\//, '$1/')}:${cf.lineNumber}`; if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + t); } cur = parent.get(cur); } }
console.log('total ms', (total / 1000).toFixed(0));
console.log('--- self top 40');
for (const [k, t] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log((t / total * 100).toFixed(1).padStart(5), k);
console.log('--- inclusive top 60');
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log((t / total * 100).toFixed(1).padStart(5), k);
