import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { RecomputeChange, RecomputeSummary } from '../tracking/recompute.js';
import { type Command, json, mode, type Values } from './command.js';

/**
 * `waytrack attribution recompute` (docs/attribution.md "Migration"), in the shape of the command
 * table (cli/commands.ts); its work loads only when it runs.
 */

type WithDatabase = <T>(config: Config, work: (db: Database) => Promise<T>) => Promise<T>;

export function attributionCommands(withDatabase: WithDatabase): Command[] {
  return [
    {
      name: 'attribution recompute',
      summary: "re-score a store's recorded conversions with the current attribution model (dry run unless --apply)",
      details: [
        'Conversions keep the attribution they were recorded with; this re-scores those of --store whose event',
        'time is on or after --since (a day in the store’s time zone) and prints each that would change:',
        'old click, confidence and signal → new, then how many would change and the revenue that would move to',
        'other clicks under each model (per currency). Confidence 100 (an explicit click reference) is kept.',
        'Nothing is written without --apply. With --apply each change is applied on its own, as',
        'POST /v1/conversions/:id/reattribute does (rollups, match quality, pending destination jobs and',
        'conversion.attributed follow; a job a platform received is never sent again): safe beside a running',
        'server, and a run stopped midway is finished by running it again.',
        'With --json: {"changes":[{conversionId,orderId,mode,eventTime,value,currency,before,after,moved,outcome?}],',
        '"summary":{storeId,since,mode,applied,examined,explicitKept,changed,revenueMoved}}.',
      ],
      options: {
        store: { type: 'string', value: 'ID', required: true, help: 'the store whose conversions to re-score' },
        since: { type: 'string', value: 'DATE', required: true, help: 'first day (YYYY-MM-DD, store time zone), inclusive' },
        apply: { type: 'boolean', help: 'apply the changes (default: only list them)' },
        account: { type: 'string', value: 'ID', help: 'the account the store must belong to (a check)' },
        mode: { ...mode, help: 'only live or only test conversions (default: both)' },
        json,
      },
      async run({ config, values }: { config: Config; values: Values; args: string[] }) {
        const { recomputeAttribution } = await import('../tracking/recompute.js');
        const apply = values.apply === true;
        const options = {
          storeId: values.store as string,
          since: values.since as string,
          apply,
          ...(typeof values.account === 'string' && { accountId: values.account }),
          ...(typeof values.mode === 'string' && { mode: values.mode as 'live' | 'test' }),
        };
        const changes: RecomputeChange[] = [];
        const report = values.json ? (c: RecomputeChange) => changes.push(c) : (c: RecomputeChange) => console.log(line(c));
        const summary = await withDatabase(config, (db) => recomputeAttribution(db, options, report));
        if (values.json) {
          console.log(JSON.stringify({ changes, summary }));
          return;
        }
        for (const text of summaryLines(summary)) console.log(text);
      },
    },
  ];
}

function state(s: RecomputeChange['before']): string {
  return s.clickId ? `${s.clickId} ${s.confidence} ${s.signal}` : 'not attributed';
}

function line(c: RecomputeChange): string {
  const outcome = c.outcome && c.outcome !== 'changed' ? ` (left: ${c.outcome.replace('_', ' ')} when applied)` : '';
  return `${c.conversionId} order ${c.orderId} ${c.mode} ${c.eventTime} ${c.value} ${c.currency}: ${state(c.before)} → ${state(c.after)}${outcome}`;
}

function summaryLines(s: RecomputeSummary): string[] {
  const verb = s.applied ? 'changed' : 'would change';
  const kept = s.explicitKept > 0 ? ` (${s.explicitKept} with confidence 100 kept)` : '';
  const lines = [`${s.changed} of ${s.examined} conversions since ${s.since} (${s.mode}) ${verb}${kept}.`];
  if (s.changed > 0) {
    lines.push(`Revenue ${s.applied ? 'moved' : 'that would move'} to other clicks, per model:`);
    for (const [model, byCurrency] of Object.entries(s.revenueMoved)) {
      const amounts = Object.entries(byCurrency).map(([currency, amount]) => `${amount} ${currency}`);
      lines.push(`  ${model}: ${amounts.length > 0 ? amounts.join(', ') : '0'}`);
    }
  }
  if (!s.applied && s.changed > 0) lines.push('Nothing was written. Run again with --apply to apply these changes.');
  return lines;
}
