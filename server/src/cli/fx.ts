import { readFile } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { type Command, json, type Values } from './command.js';

/**
 * `waytrack fx load` and `waytrack fx restate` (docs/operations.md "Exchange rates"), in the
 * shape of the command table (cli/commands.ts); their work loads only when they run.
 */

type WithDatabase = <T>(config: Config, work: (db: Database) => Promise<T>) => Promise<T>;

export function fxCommands(withDatabase: WithDatabase): Command[] {
  return [
    {
      name: 'fx load',
      args: ['FILE'],
      summary: 'load dated exchange rates from a CSV file (date,base,currency,rate)',
      details: [
        'FILE: a header line naming the columns date,base,currency,rate, then one rate a line: `rate` units of',
        '`currency` for one unit of `base` on `date` (YYYY-MM-DD), e.g. 2026-11-20,EUR,USD,1.0843. One base per',
        'installation. Every line is checked; any problem loads nothing and names its line. Loading again is',
        'harmless: equal rates are unchanged, a different rate replaces the one held (and is listed), but',
        'conversions already recorded keep their rate until `waytrack fx restate`.',
        'With --json: {"base","rates","added","changed":[{date,currency,from,to}],"unchanged","firstDate","lastDate"}.',
      ],
      options: { json },
      async run({ config, values, args }: { config: Config; values: Values; args: string[] }) {
        const file = args[0] as string;
        const csv = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
          throw new Error(`cannot read ${file}: ${error.code ?? error.message}`);
        });
        const { loadRates } = await import('../fx/operations.js');
        const { FxFileError } = await import('../fx/rates.js');
        const result = await withDatabase(config, (db) => loadRates(db, csv)).catch((error: unknown) => {
          if (error instanceof FxFileError) {
            throw new Error(`${file} was not loaded (nothing was):\n${error.problems.map((p) => `  ${p}`).join('\n')}`);
          }
          throw error;
        });
        if (values.json) {
          console.log(JSON.stringify(result));
          return;
        }
        console.log(
          `Loaded ${result.rates} rates against ${result.base} from ${result.firstDate} to ${result.lastDate}: ` +
            `${result.added} new, ${result.changed.length} changed, ${result.unchanged} unchanged.`,
        );
        for (const c of result.changed) console.log(`  ${c.currency} on ${c.date}: ${c.from} → ${c.to}`);
        if (result.changed.length > 0) {
          console.log('Conversions recorded before keep their rate; `waytrack fx restate --from D --to D` applies the new ones.');
        }
      },
    },
    {
      name: 'fx restate',
      summary: 're-derive the exchange rate recorded with past conversions, listing every change',
      details: [
        'For each conversion in another currency than its store’s whose day (store time zone) is in',
        '--from..--to, looks the rate up again from the rates loaded now and the store’s currency now, and',
        'rewrites it where it differs; each change is printed (before → after). --dry-run only lists them.',
        'With --json: an array of {"conversionId","storeId","date","currency","before","after"}.',
      ],
      options: {
        from: { type: 'string' as const, value: 'DATE', required: true, help: 'first day (YYYY-MM-DD), inclusive' },
        to: { type: 'string' as const, value: 'DATE', required: true, help: 'last day (YYYY-MM-DD), inclusive' },
        store: { type: 'string' as const, value: 'ID', help: 'only this store’s conversions' },
        'dry-run': { type: 'boolean' as const, help: 'list the changes without writing them' },
        json,
      },
      async run({ config, values }: { config: Config; values: Values; args: string[] }) {
        const { restate } = await import('../fx/operations.js');
        const options = {
          from: values.from as string,
          to: values.to as string,
          ...(typeof values.store === 'string' && { storeId: values.store }),
          dryRun: values['dry-run'] === true,
        };
        const changes = await withDatabase(config, (db) => restate(db, options));
        if (values.json) {
          console.log(JSON.stringify(changes));
          return;
        }
        const show = (v: (typeof changes)[number]['before']) =>
          v ? `${v.value} ${v.currency} at ${v.rate} (${v.rateDate})` : 'no rate';
        for (const c of changes) {
          console.log(`${c.conversionId} ${c.storeId} ${c.date} ${c.currency}: ${show(c.before)} → ${show(c.after)}`);
        }
        const verb = options.dryRun ? 'would change' : 'changed';
        console.log(`Restated ${options.from}..${options.to}: ${changes.length} conversions ${verb}.`);
      },
    },
  ];
}
