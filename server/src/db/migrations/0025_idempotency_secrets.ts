import type { Kysely } from 'kysely';

/**
 * Answers kept for `Idempotency-Key` replays no longer hold secrets (api.md §1, §9): until this
 * version, `POST /v1/webhooks` kept its whole answer, the endpoint's `whsec_…` signing secret in
 * clear, for 24 hours. Such answers still kept are redacted as new ones are
 * (http/idempotency.ts): `data.secret` null with `data.secretRedacted: true`, and anything else
 * shaped like a secret (an API key, a webhook secret) replaced by `[redacted]`. Self-contained,
 * as a shipped migration must stay: the rules are copied, not imported.
 */
const SECRET_LOOK = /\b(?:wt_(?:pk_)?(?:live|test)_[0-9A-Za-z]{32,128}|whsec_[A-Za-z0-9+/]{32,}={0,2})/g;

function redacted(response: string): string {
  let text = response;
  try {
    const answer = JSON.parse(response) as { data?: Record<string, unknown> };
    const data = answer.data;
    if (data && typeof data === 'object' && typeof data.secret === 'string' && data.secret.startsWith('whsec_')) {
      data.secret = null;
      data.secretRedacted = true;
      text = JSON.stringify(answer);
    }
  } catch {
    // Not JSON: the look-based pass below still applies.
  }
  return text.replace(SECRET_LOOK, '[redacted]');
}

interface Row {
  account_id: string;
  livemode: number;
  key: string;
  response: string | null;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const table = db as unknown as Kysely<{ idempotency_keys: Row }>;
  // LIKE's `_` matches any character, itself included: a superset, narrowed by the redaction.
  const rows = await table
    .selectFrom('idempotency_keys')
    .select(['account_id', 'livemode', 'key', 'response'])
    .where((eb) => eb.or(['whsec_%', 'wt_live_%', 'wt_test_%', 'wt_pk_%'].map((look) => eb('response', 'like', `%${look}`))))
    .execute();
  for (const row of rows) {
    if (row.response === null) continue;
    const kept = redacted(row.response);
    if (kept === row.response) continue;
    await table
      .updateTable('idempotency_keys')
      .set({ response: kept })
      .where('account_id', '=', row.account_id)
      .where('livemode', '=', row.livemode)
      .where('key', '=', row.key)
      .execute();
  }
}
