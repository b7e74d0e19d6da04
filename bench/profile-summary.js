// node bench/profile-summary.js FILE.cpuprofile [N] — a V8 CPU profile (bench/profile-clicks.js,
// BENCH_CPU_PROF) as two tables: the N functions with the most self time, and the N with the
// most inclusive time (each function counted once per sample however deep it recurses), as %
// of the profile's wall time (idle included, so the busy share is 100 − idle). PROFILE_SKIP_MS=N
// leaves out the first N ms sampled (the start-up, before the load begins).
import { readFileSync } from 'node:fs';

const file = process.argv[2];
const top = Number(process.argv[3] ?? 40);
if (!file) throw new Error('usage: node bench/profile-summary.js FILE.cpuprofile [N]');
const profile = JSON.parse(readFileSync(file, 'utf8'));

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const nameOf = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url.replace(/.*\/(node_modules|src|dist)\//, '$1/')}:${lineNumber + 1}`;
};

// Time per sampled node (µs), from the samples and their deltas.
const timeOf = new Map();
let total = 0;
const skipUs = Number(process.env.PROFILE_SKIP_MS ?? 0) * 1000;
let elapsed = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsed += delta;
  if (elapsed < skipUs) return;
  timeOf.set(id, (timeOf.get(id) ?? 0) + delta);
  total += delta;
});

const self = new Map();
const inclusive = new Map();
for (const [id, time] of timeOf) {
  const name = nameOf(nodes.get(id));
  self.set(name, (self.get(name) ?? 0) + time);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const ancestor = nameOf(nodes.get(at));
    if (seen.has(ancestor)) continue;
    seen.add(ancestor);
    inclusive.set(ancestor, (inclusive.get(ancestor) ?? 0) + time);
  }
}

const print = (title, times) => {
  console.log(title);
  const rows = [...times].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, time] of rows) console.log(`${((100 * time) / total).toFixed(1).padStart(6)} %  ${name}`);
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
print(`\nself time, top ${top}`, self);
print(`\ninclusive time, top ${top}`, inclusive);
