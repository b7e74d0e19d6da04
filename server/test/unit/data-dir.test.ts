import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { tightenDataDir } from '../../src/data-dir.js';
import { openSqlite } from '../../src/db/sqlite/database.js';
import { loadSecretsKey } from '../../src/secrets.js';
import { loadTls } from '../../src/tls.js';
import { tempDir } from '../helpers.js';

const modeOf = (file: string) => `0${(statSync(file).mode & 0o777).toString(8)}`;
const dirs: string[] = [];
const fresh = () => {
  const parent = tempDir();
  dirs.push(parent);
  return path.join(parent, 'data');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// DATA_DIR holds every event, the secrets key and the TLS private key: nobody but its owner reads it.
describe('DATA_DIR permissions', () => {
  it('the embedded database, its -wal and -shm files are created 0600 in a 0700 directory, whatever the umask', async () => {
    const dataDir = fresh();
    const previous = process.umask(0o022); // the usual umask, which made the database 0644 before
    let database: ReturnType<typeof openSqlite>;
    try {
      database = openSqlite(dataDir);
      await database.migrate();
    } finally {
      process.umask(previous);
    }
    try {
      expect(modeOf(dataDir)).toBe('0700');
      const files = readdirSync(dataDir);
      expect(files).toEqual(expect.arrayContaining(['waytrack.db', 'waytrack.db-wal', 'waytrack.db-shm']));
      for (const file of files) expect([file, modeOf(path.join(dataDir, file))]).toEqual([file, '0600']);
    } finally {
      await database.close();
    }
  });

  it('the generated secrets key and TLS files are 0600, their directories 0700', async () => {
    const dataDir = fresh();
    loadSecretsKey({ secretsKey: undefined, dataDir });
    const tls = await loadTls(loadConfig({ DATA_DIR: dataDir }));
    expect(tls.selfSignedPath).toBe(path.join(dataDir, 'tls', 'localhost-cert.pem'));
    expect(modeOf(dataDir)).toBe('0700');
    expect(modeOf(path.join(dataDir, 'secrets.key'))).toBe('0600');
    expect(modeOf(path.join(dataDir, 'tls'))).toBe('0700');
    expect(modeOf(path.join(dataDir, 'tls', 'localhost-key.pem'))).toBe('0600');
    expect(modeOf(path.join(dataDir, 'tls', 'localhost-cert.pem'))).toBe('0600');
  });

  it("tightens what an earlier version left readable, and only Waytrack's own files", () => {
    const dataDir = fresh();
    mkdirSync(path.join(dataDir, 'tls'), { recursive: true });
    const own = ['waytrack.db', 'waytrack.db-wal', 'secrets.key', 'tls/localhost-key.pem', 'tls/localhost-cert.pem'];
    for (const file of own) writeFileSync(path.join(dataDir, file), 'x', { mode: 0o644 });
    writeFileSync(path.join(dataDir, 'notes.txt'), 'the operator keeps this here', { mode: 0o644 });
    const outside = path.join(path.dirname(dataDir), 'elsewhere.pem');
    writeFileSync(outside, 'x', { mode: 0o644 });
    rmSync(path.join(dataDir, 'tls', 'localhost-cert.pem'));
    symlinkSync(outside, path.join(dataDir, 'tls', 'localhost-cert.pem'));
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'tls'), 0o750);
    chmodSync(path.join(dataDir, 'secrets.key'), 0o640);

    const loose = tightenDataDir(dataDir);
    expect(loose.map((entry) => [path.relative(dataDir, entry.path), entry.mode, entry.error])).toEqual([
      ['', '0755', undefined],
      ['waytrack.db', '0644', undefined],
      ['waytrack.db-wal', '0644', undefined],
      ['secrets.key', '0640', undefined],
      ['tls', '0750', undefined],
      ['tls/localhost-key.pem', '0644', undefined],
    ]);
    expect(modeOf(dataDir)).toBe('0700');
    expect(modeOf(path.join(dataDir, 'tls'))).toBe('0700');
    for (const file of ['waytrack.db', 'waytrack.db-wal', 'secrets.key', 'tls/localhost-key.pem']) {
      expect(modeOf(path.join(dataDir, file))).toBe('0600');
    }
    expect(modeOf(path.join(dataDir, 'notes.txt'))).toBe('0644'); // not Waytrack's
    expect(modeOf(outside)).toBe('0644'); // a link is not followed out of DATA_DIR
    expect(tightenDataDir(dataDir)).toEqual([]); // once is enough
    expect(tightenDataDir(path.join(dataDir, 'missing'))).toEqual([]);
  });
});
