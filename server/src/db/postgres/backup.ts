/**
 * On PostgreSQL, `waytrack backup` and `waytrack restore` copy nothing themselves: pg_dump takes
 * a consistent snapshot while every instance keeps serving, and pg_restore is the tool operators
 * already trust. This writes the commands for the configured database — its host, port, user,
 * database and schema, never its password (pg_dump reads that from PGPASSWORD or ~/.pgpass).
 */
export function postgresBackupAdvice(kind: 'backup' | 'restore', databaseUrl: string, file: string): string {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || decodeURIComponent(url.username) || 'postgres';
  // A Waytrack in a schema of its own (`options=-c search_path=NAME`): dump that schema alone.
  const schema = /search_path\s*=\s*([A-Za-z_][\w$]*)/.exec(url.searchParams.get('options') ?? '')?.[1];
  const connection = [
    url.hostname && `--host=${quote(url.hostname.replace(/^\[|\]$/g, ''))}`,
    url.port && `--port=${url.port}`,
    url.username && `--username=${quote(decodeURIComponent(url.username))}`,
  ].filter(Boolean);
  const where = `database "${database}"${schema ? `, schema "${schema}"` : ''}${url.hostname ? ` on ${url.host}` : ''}`;
  const lines =
    kind === 'backup'
      ? [
          `Waytrack runs on PostgreSQL here (${where}): back it up with pg_dump, which takes a consistent`,
          'snapshot while the instances keep serving. Nothing was written. Run:',
          '',
          // umask 077: the dump holds every click and conversion; only its owner may read it (0600).
          `  (umask 077 && pg_dump --format=custom ${[...connection, ...(schema ? [`--schema=${quote(schema)}`] : [])].join(' ')} --file=${quote(file)} ${quote(database)})`,
        ]
      : [
          `Waytrack runs on PostgreSQL here (${where}): restore with pg_restore. Nothing was changed.`,
          'Stop every instance first, then run:',
          '',
          `  pg_restore --clean --if-exists --no-owner ${connection.join(' ')} --dbname=${quote(database)} ${quote(file)}`,
          '',
          'then `waytrack migrate` with this version, and start the instances again.',
        ];
  lines.push('', 'The password comes from PGPASSWORD or ~/.pgpass; see docs/operations.md.');
  return lines.join('\n');
}

/** Quotes a shell word unless it is plainly safe. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
