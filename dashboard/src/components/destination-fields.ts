// The settings form of each destination (api.md §8): its fields as the PUT body names them (a
// dotted path for nested ones), how each reads from GET …/destinations' `settings`, and the body
// a submitted form becomes. The API checks every value and names a bad one in `details.field`;
// the page shows that message beside the field (no second set of rules here).
import type { DestinationKind } from '../types.js';

export interface FieldSpec {
  /** The PUT body's field: `customerId`, `oauth.clientId`. */
  path: string;
  label: string;
  /** Write-only: never shown; left blank, the stored one is kept. */
  secret?: boolean;
  /** A help line under the field. */
  hint?: string;
  /** Google Ads' conversion action: one resource name, or one `EventType = resource name` a line. */
  actions?: true;
  /** A choice among fixed values (a select; the first is what a new destination gets). */
  choices?: Array<{ value: string; label: string }>;
  /** A true/false setting, shown as its choices `false`/`true` and sent as a boolean. */
  boolean?: true;
}

export const DESTINATION_FIELDS: Record<DestinationKind, FieldSpec[]> = {
  meta: [
    { path: 'pixelId', label: 'Pixel ID', hint: '5–20 digits, from Meta Events Manager.' },
    { path: 'accessToken', label: 'Conversions API access token', secret: true },
    { path: 'testEventCode', label: 'Test event code', hint: 'Optional: test-mode conversions go to Meta with it.' },
  ],
  google_ads: [
    {
      path: 'api',
      label: 'API',
      choices: [
        { value: 'data_manager', label: 'Data Manager API (recommended)' },
        { value: 'google_ads_api', label: 'Google Ads API (developer token)' },
      ],
      hint: 'Data Manager works for every Google Ads account and needs only the OAuth client below. Choose the Google Ads API only if your developer token already uploads click conversions: since 15 June 2026 Google refuses them from new tokens.',
    },
    { path: 'customerId', label: 'Customer ID', hint: '10 digits, without dashes.' },
    { path: 'loginCustomerId', label: 'Login customer ID', hint: 'Optional: the manager account, 10 digits.' },
    {
      path: 'conversionAction',
      label: 'Conversion action',
      actions: true,
      hint: 'A resource name customers/<id>/conversionActions/<id>, or one line per event type: Purchase = customers/…/conversionActions/…',
    },
    {
      path: 'developerToken',
      label: 'Developer token',
      secret: true,
      hint: 'Google Ads API only: leave blank with Data Manager.',
    },
    { path: 'oauth.clientId', label: 'OAuth client ID' },
    { path: 'oauth.clientSecret', label: 'OAuth client secret', secret: true },
    { path: 'oauth.refreshToken', label: 'OAuth refresh token', secret: true },
  ],
  tiktok: [
    { path: 'pixelCode', label: 'Pixel code', hint: 'From TikTok Events Manager: capital letters and digits.' },
    { path: 'accessToken', label: 'Access token', secret: true },
    { path: 'testEventCode', label: 'Test event code', hint: 'Optional: test-mode conversions go to TikTok with it.' },
  ],
  microsoft: [
    { path: 'tagId', label: 'UET tag ID', hint: 'Microsoft Advertising → Tools → UET tag: the tag’s ID (digits).' },
    {
      path: 'accessToken',
      label: 'Conversions API token',
      secret: true,
      hint: 'From the UET tag’s “Use Conversions API”. Test-mode conversions are not sent to Microsoft.',
    },
  ],
  pinterest: [
    { path: 'adAccountId', label: 'Ad account ID', hint: 'Digits, from Pinterest Ads Manager (the account menu).' },
    {
      path: 'accessToken',
      label: 'Conversion access token',
      secret: true,
      hint: 'Ads Manager → Ads → Conversions → Conversions API → Generate new token.',
    },
    {
      path: 'testMode',
      label: 'Test mode',
      boolean: true,
      choices: [
        { value: 'false', label: 'Off: live conversions are recorded' },
        { value: 'true', label: 'On: every conversion is only validated (test=true)' },
      ],
      hint: 'Test-mode conversions are always sent with test=true.',
    },
  ],
  snapchat: [
    { path: 'pixelId', label: 'Pixel ID', hint: 'From Snapchat Ads Manager → Events Manager (a UUID).' },
    {
      path: 'accessToken',
      label: 'Conversions API token',
      secret: true,
      hint: 'Business Details → Conversions API Tokens → Generate Token. Test-mode conversions go to Snap’s Test Event Tool.',
    },
  ],
  reddit: [
    {
      path: 'adAccountId',
      label: 'Ad account ID',
      hint: 'From Reddit Ads Manager: t2_… or a2_… (the account menu, or the ads.reddit.com address).',
    },
    {
      path: 'accessToken',
      label: 'Conversion access token',
      secret: true,
      hint: 'Events Manager → your pixel → Conversions API → Generate access token. Test-mode conversions go to Reddit with test_mode.',
    },
  ],
  linkedin: [
    {
      path: 'conversionRuleId',
      label: 'Conversion rule',
      hint: 'Campaign Manager → Analyze → Conversion tracking → the rule: urn:lla:llaPartnerConversion:<digits>, or the digits alone.',
    },
    {
      path: 'accessToken',
      label: 'Access token',
      secret: true,
      hint: 'An OAuth token with the rw_conversions scope (it lasts 60 days). LinkedIn has no test mode: test-mode conversions are not sent.',
    },
  ],
};

type Settings = Record<string, unknown> | null | undefined;

function at(settings: Settings, path: string[]): unknown {
  let value: unknown = settings;
  for (const key of path) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** What a field shows: the stored value (a map of conversion actions as lines); '' for secrets. */
export function shownValue(settings: Settings, spec: FieldSpec): string {
  if (spec.secret) return '';
  const value = at(settings, spec.path.split('.'));
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (spec.choices) return spec.choices[0]?.value ?? '';
  if (spec.actions && value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([eventType, action]) => `${eventType} = ${String(action)}`)
      .join('\n');
  }
  return '';
}

/** A secret is stored when the settings say `<name>Configured: true` beside where it would be. */
export function secretConfigured(settings: Settings, spec: FieldSpec): boolean {
  const path = spec.path.split('.');
  const name = path.pop() as string;
  return at(settings, [...path, `${name}Configured`]) === true;
}

/** A form error before any request: the field, and what is wrong with it. */
export class FieldProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** `Purchase = customers/…` lines → a map; a single line without `=` → one resource name. */
function conversionAction(text: string, path: string): string | Record<string, string> | undefined {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  if (lines.length === 0) return undefined;
  if (lines.length === 1 && !lines[0]?.includes('=')) return lines[0];
  const map: Record<string, string> = {};
  for (const line of lines) {
    const split = line.indexOf('=');
    if (split < 0) throw new FieldProblem(path, `Each line needs an event type and a resource name: ${line} = …`);
    map[line.slice(0, split).trim()] = line.slice(split + 1).trim();
  }
  return map;
}

/**
 * The PUT body of a submitted form: each filled field at its path. A blank secret is left out
 * (the stored one is kept); a blank setting is left out too (the PUT replaces the settings, so
 * an optional one is removed, and a required one gets the API's field error).
 */
export function bodyOf(kind: DestinationKind, form: FormData): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const spec of DESTINATION_FIELDS[kind]) {
    const text = String(form.get(spec.path) ?? '').trim();
    const value = spec.actions ? conversionAction(text, spec.path) : spec.boolean ? text === 'true' : text || undefined;
    const path = spec.path.split('.');
    const name = path.pop() as string;
    let target = body;
    for (const key of path) {
      // oauth is always sent (an empty one gets the field errors of its own fields).
      target[key] ??= {};
      target = target[key] as Record<string, unknown>;
    }
    if (value !== undefined) target[name] = value;
  }
  return body;
}

/** The field an API error names (`conversionAction.Purchase` is the conversion action's). */
export function fieldOf(kind: DestinationKind, field: unknown): string | undefined {
  if (typeof field !== 'string') return undefined;
  return DESTINATION_FIELDS[kind].find((spec) => field === spec.path || field.startsWith(`${spec.path}.`))?.path;
}
