import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { cliAsync, databaseForProcesses, request, type ServerProcess, serve } from './process.js';

async function allClickIds(server: ServerProcess, key: string, storeId: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<typeof request>> = await request(
      server,
      'GET',
      `/v1/clicks?storeId=${storeId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    expect(page.status).toBe(200);
    seen.push(...page.body.data.clicks.map((c: { clickId: string }) => c.clickId));
    cursor = page.body.data.nextCursor;
  } while (cursor);
  return seen;
}

describe.runIf(ENGINE === 'sqlite')('waytrack backup / restore on the embedded database (end to end)', () => {
  const dirs: string[] = [];
  let testDb: TestDatabase;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-backup-'));
    dirs.push(dataDir);
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await testDb?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a backup taken while clicks flow holds every click acknowledged before it began; restore brings them back', async () => {
    // Eight senders as fast as the server answers: far above the default per-key rate limit.
    const env: Record<string, string> = { ...testDb.env, RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000' };
    const dataDir = env.DATA_DIR as string;
    server = await serve(env);
    const created = await cliAsync(['account', 'create', '--email', 'backup@example.com', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout).keys.live as string;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Backup', domain: 'backup.example.com', platform: 'custom' },
    });
    expect(store.status).toBe(201);
    const storeId = store.body.data.id as string;

    // Clicks from 8 concurrent senders until told to stop; each acknowledged id is recorded
    // with the moments its request left and its answer arrived.
    const running = server;
    const acknowledged: { id: string; sentAt: number; at: number }[] = [];
    let stop = false;
    let failure: unknown;
    let sent = 0;
    const senders = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const n = sent++;
        const sentAt = performance.now();
        const res = await request(running, 'POST', '/v1/track/click', {
          key,
          body: { fbclid: `backup-${n}`, storeId, landingPage: 'https://backup.example.com/' },
        });
        if (res.status !== 200) {
          failure ??= new Error(`click ${n} answered ${res.status}: ${JSON.stringify(res.body)}`);
          stop = true;
          return;
        }
        acknowledged.push({ id: res.body.data.clickId, sentAt, at: performance.now() });
      }
    });
    // Waits for `count` acknowledged clicks, or fails at once with why the senders stopped.
    const untilAcknowledged = async (count: number) => {
      while (acknowledged.length < count && !failure) await new Promise((r) => setTimeout(r, 10));
      if (failure) throw failure;
    };
    await untilAcknowledged(200);

    const file = path.join(mkdtempSync(path.join(tmpdir(), 'waytrack-backup-file-')), 'nightly.db');
    dirs.push(path.dirname(file));
    const backupStarted = performance.now();
    const before = acknowledged.map((a) => a.id);
    const backup = await cliAsync(['backup', file], env);
    const backupEnded = performance.now();
    // More clicks after the backup: they must not be in it (it is a snapshot, not the live file).
    const countAtEnd = acknowledged.length;
    await untilAcknowledged(countAtEnd + 50);
    stop = true;
    await Promise.all(senders);
    if (failure) throw failure;

    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`Backed up the database to ${file}`);
    expect(backup.stdout).toContain('secrets.key');
    expect(existsSync(file)).toBe(true);
    const during = acknowledged.filter((a) => a.at > backupStarted && a.at < backupEnded).length;
    expect(during, 'clicks were acknowledged while the backup ran').toBeGreaterThan(0);
    // Sent after the backup had ended: not in it. (One answered after the end but sent before it
    // may have committed before the snapshot, its answer waiting for the log's sync: it may be in
    // it, and then exactly once, as every click is.)
    const after = acknowledged.filter((a) => a.sentAt > backupEnded).map((a) => a.id);
    expect(after.length, 'clicks were sent after the backup ended').toBeGreaterThan(0);

    // While this server has the database open, restore refuses and leaves it alone.
    const refused = await cliAsync(['restore', file], env);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/in use by another process/);
    const stillServing = await request(server, 'POST', '/v1/track/click', {
      key,
      body: { fbclid: 'after-refused-restore', storeId, landingPage: 'https://backup.example.com/' },
    });
    expect(stillServing.status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    // A fresh machine: an empty DATA_DIR with the old installation's secrets key.
    const fresh = mkdtempSync(path.join(tmpdir(), 'waytrack-restored-'));
    dirs.push(fresh);
    copyFileSync(path.join(dataDir, 'secrets.key'), path.join(fresh, 'secrets.key'));
    const restored = await cliAsync(['restore', file], { DATA_DIR: fresh });
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into ${path.join(fresh, 'waytrack.db')}`);

    server = await serve({ DATA_DIR: fresh });
    const seen = await allClickIds(server, key, storeId);
    for (const id of before) expect(seen.filter((s) => s === id)).toHaveLength(1);
    for (const id of after) expect(seen).not.toContain(id);
    expect(seen).not.toContain(stillServing.body.data.clickId);
    expect(new Set(seen).size).toBe(seen.length);
  }, 120_000);

  it('restore replaces an existing database; backup and restore refuse what they cannot do', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-replace-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir };
    expect((await cliAsync(['account', 'create', '--email', 'first@example.com'], env)).status).toBe(0);
    const file = path.join(dataDir, 'first.db');
    expect((await cliAsync(['backup', file], env)).status).toBe(0);
    // Like everything in DATA_DIR: readable by its owner only, whatever the umask (here 022).
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((await cliAsync(['account', 'create', '--email', 'second@example.com'], env)).status).toBe(0);
    const emails = async () =>
      JSON.parse((await cliAsync(['account', 'list', '--json'], env)).stdout).map((a: { email: string }) => a.email);
    expect(await emails()).toEqual(['first@example.com', 'second@example.com']);

    const over = await cliAsync(['restore', file], env);
    expect(over.status, over.stderr).toBe(0);
    for (const suffix of ['-wal', '-shm']) expect(existsSync(path.join(dataDir, `waytrack.db${suffix}`))).toBe(false);
    expect(await emails()).toEqual(['first@example.com']);

    const nothing = await cliAsync(['backup', path.join(dataDir, 'x.db')], { DATA_DIR: path.join(dataDir, 'none') });
    expect(nothing.status).not.toBe(0);
    expect(nothing.stderr).toContain('no database to back up');
    expect(existsSync(path.join(dataDir, 'x.db'))).toBe(false);

    const missing = await cliAsync(['restore', path.join(dataDir, 'missing.db')], { DATA_DIR: path.join(dataDir, 'other') });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('does not exist');

    writeFileSync(path.join(dataDir, 'notes.txt'), 'not a database, but long enough to be read as one\n'.repeat(100));
    const garbage = await cliAsync(['restore', path.join(dataDir, 'notes.txt')], { DATA_DIR: path.join(dataDir, 'other') });
    expect(garbage.status).not.toBe(0);
    expect(garbage.stderr).toMatch(/not a SQLite database|not a Waytrack database/);
    expect(existsSync(path.join(dataDir, 'other', 'waytrack.db'))).toBe(false);
  }, 60_000);
});

describe.runIf(ENGINE === 'postgres')('waytrack backup / restore on PostgreSQL (end to end)', () => {
  const testDb = databaseForProcesses('waytrack-backup-pg-');

  it('prints the pg_dump / pg_restore commands for DATABASE_URL without its password, writes nothing and exits 1', async () => {
    const url = new URL(testDb.env.DATABASE_URL as string);
    url.password = 'n0t-to-be-printed';
    const env = { ...testDb.env, DATABASE_URL: url.toString() };
    const database = decodeURIComponent(url.pathname.slice(1));
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(url.searchParams.get('options') ?? ''))?.[1];
    const file = path.join(testDb.dataDir, 'waytrack.dump');

    const backup = await cliAsync(['backup', file], env);
    expect(backup.status).toBe(1);
    expect(backup.stderr).toContain('(umask 077 && pg_dump --format=custom');
    expect(backup.stderr).toContain(`--file=${file} ${database}`);
    if (schema) expect(backup.stderr).toContain(`--schema=${schema}`);
    expect(backup.stderr + backup.stdout).not.toContain('n0t-to-be-printed');
    expect(existsSync(file)).toBe(false);

    const restore = await cliAsync(['restore', file], env);
    expect(restore.status).toBe(1);
    expect(restore.stderr).toContain(`pg_restore --clean --if-exists --no-owner`);
    expect(restore.stderr).toContain(`--dbname=${database} ${file}`);
    expect(restore.stderr + restore.stdout).not.toContain('n0t-to-be-printed');
  });
});
