import type { Reader } from '../db/database.js';
import { openDestination } from '../destinations/settings.js';
import type { SecretBox } from '../secrets.js';
import type { SpendCredentials } from './platforms/types.js';
import type { SourceSecrets, SourceSettings, SpendSourceKind } from './source-settings.js';

/**
 * The credentials a spend source pulls with (api.md §11): each secret the source's own, else the
 * store's destination of that kind (Meta's is the store's capiAccessToken; Google Ads' the
 * destination's OAuth client, refresh token, developer token and manager account; TikTok's its
 * access token). What neither has is named by its field (`missing`).
 */
export type Resolved =
  | { credentials: SpendCredentials; from: 'source' | 'destination' | 'both' }
  | { missing: string; message: string };

const context = (storeId: string, kind: string) => `${storeId}:spend:${kind}`;

export function sealSecrets(secrets: SecretBox, storeId: string, kind: string, value: SourceSecrets): string | null {
  return Object.keys(value).length === 0 ? null : secrets.seal(JSON.stringify(value), context(storeId, kind));
}

/** The source's own secrets; undefined when they no longer open (SECRETS_KEY changed: send them again). */
export function openSecrets(secrets: SecretBox, storeId: string, kind: string, sealed: string | null): SourceSecrets | undefined {
  if (sealed === null) return {};
  try {
    return JSON.parse(secrets.open(sealed, context(storeId, kind))) as SourceSecrets;
  } catch {
    return undefined;
  }
}

async function destinationOf(db: Reader, store: { accountId: string; storeId: string }, kind: string, secrets: SecretBox) {
  try {
    return await openDestination(db, store, kind, secrets);
  } catch {
    return undefined; // its secrets no longer open: as good as none
  }
}

const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

export async function resolveCredentials(
  db: Reader,
  secrets: SecretBox,
  source: { accountId: string; storeId: string; kind: SpendSourceKind; settings: SourceSettings; own: SourceSecrets },
): Promise<Resolved> {
  const { kind, own } = source;
  const needsDestination =
    kind === 'google_ads' ? !(own.developerToken && own.clientSecret && source.settings.oauthClientId) : !own.accessToken;
  const destination = needsDestination ? await destinationOf(db, source, kind, secrets) : undefined;
  const lent = destination?.secrets ?? {};
  const lentSettings = destination?.settings ?? {};
  const from = (mine: boolean) => (mine ? 'source' : 'destination');
  if (kind !== 'google_ads') {
    const accessToken = own.accessToken ?? str(lent.accessToken);
    if (!accessToken) {
      const where =
        kind === 'meta' ? 'the store has no capiAccessToken (meta destination)' : 'the store has no tiktok destination';
      return { missing: 'accessToken', message: `accessToken is required: ${where} to lend its token` };
    }
    return { credentials: { kind, accessToken }, from: from(own.accessToken !== undefined) };
  }
  const developerToken = own.developerToken ?? str(lent.developerToken);
  if (!developerToken) {
    return {
      missing: 'developerToken',
      message:
        'developerToken is required: the store’s google_ads destination has none to lend (reports need the Google Ads API)',
    };
  }
  const ownOauth = source.settings.oauthClientId !== undefined;
  const clientId = ownOauth ? source.settings.oauthClientId : str(lentSettings.oauthClientId);
  const clientSecret = ownOauth ? own.clientSecret : str(lent.clientSecret);
  const refreshToken = ownOauth ? own.refreshToken : str(lent.refreshToken);
  if (!clientId || !clientSecret || !refreshToken) {
    return { missing: 'oauth', message: 'oauth is required: the store has no google_ads destination to lend its OAuth client' };
  }
  const loginCustomerId = source.settings.loginCustomerId ?? str(lentSettings.loginCustomerId);
  const mine = ownOauth && own.developerToken !== undefined;
  const theirs = !ownOauth && own.developerToken === undefined;
  return {
    credentials: {
      kind,
      developerToken,
      clientId,
      clientSecret,
      refreshToken,
      ...(loginCustomerId && { loginCustomerId }),
    },
    from: mine ? 'source' : theirs ? 'destination' : 'both',
  };
}
