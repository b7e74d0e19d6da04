// Completes package-lock.json with the platform-specific optional packages (biome, rollup,
// esbuild, … builds for other systems) that this machine's registry mirror does not carry.
// npm leaves them out when it cannot resolve them, and `npm ci` then refuses the lockfile as
// out of sync. Each added entry carries the os/cpu/libc it is for, so npm skips it here without
// fetching, exactly as it does with a lockfile written where the registry had them.
// Run after any `npm install` that rewrites the lockfile: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p) || p === 'win32');
  const cpu = parts.find((p) => CPU.includes(p)) ?? (parts.includes('x86') ? 'ia32' : undefined);
  const libc = parts.includes('musl') ? 'musl' : parts.includes('gnu') || parts.includes('gnueabihf') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = key === '' ? `node_modules/${dep}` : `${key}/node_modules/${dep}`;
    if (lock.packages[at] || lock.packages[`node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) continue;
    lock.packages[`node_modules/${dep}`] = {
      version,
      ...(entry.dev && { dev: true }),
      optional: true,
      os: [os],
      cpu: [cpu],
      ...(libc && { libc: [libc] }),
    };
    added++;
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
