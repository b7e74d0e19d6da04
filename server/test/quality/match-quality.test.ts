import { describe, expect, it } from 'vitest';
import type { ClicksTable, ConversionsTable } from '../../src/db/schema.js';
import { MATCH_WEIGHTS, matchQualityOf, scoreMatch, signalsFor } from '../../src/quality/match-quality.js';
import { summarizeMatchQuality } from '../../src/quality/summary.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const DAY = 86_400_000;

describe('match quality score', () => {
  it('each destination’s weights add up to 10', () => {
    for (const weights of Object.values(MATCH_WEIGHTS)) {
      expect(Object.values(weights).reduce((a, b) => a + b, 0)).toBe(10);
    }
  });

  it('Meta with every key scores 10 and lists no missing key', () => {
    const q = scoreMatch('meta', {
      clickId: `fb.1.${NOW - DAY}.abc`,
      customerData: { email: 'a@b.example', phone: '+14155550100', city: 'Berlin' },
      ipAddress: '203.0.113.9',
      userAgent: 'Mozilla/5.0',
      browserId: 'fb.1.1.2',
      eventTime: NOW,
    });
    expect(q).toEqual({
      score: 10,
      keys: ['clickId', 'email', 'phone', 'ipUserAgent', 'fbp', 'address'],
      missing: [],
      warnings: [],
    });
  });

  it('nothing to match on scores 0, with the missing IP/UA warning for a server-side send', () => {
    const q = scoreMatch('meta', { eventTime: NOW });
    expect(q.score).toBe(0);
    expect(q.missing).toEqual(['clickId', 'email', 'phone', 'ipUserAgent', 'fbp', 'address']);
    expect(q.warnings.map((w) => w.code)).toEqual(['ip_user_agent_missing']);
  });

  it('IP without user agent does not count', () => {
    const q = scoreMatch('tiktok', { ipAddress: '203.0.113.9', eventTime: NOW });
    expect(q.keys).toEqual([]);
    expect(q.missing).toContain('ipUserAgent');
  });

  it('warns about an fbc older than 7 days but still counts it', () => {
    const q = scoreMatch('meta', { clickId: `fb.1.${NOW - 8 * DAY}.abc`, eventTime: NOW });
    expect(q.keys).toContain('clickId');
    expect(q.warnings[0]).toMatchObject({ code: 'fbc_stale', key: 'clickId' });
    expect(q.warnings[0]?.message).toContain('fbc older than 7 days');
    expect(
      scoreMatch('meta', { clickId: `fb.1.${NOW - 6 * DAY}.abc`, eventTime: NOW }).warnings.map((w) => w.code),
    ).not.toContain('fbc_stale');
  });

  it('a malformed fbc is not a click id and says how to fix it', () => {
    const q = scoreMatch('meta', { malformedFbc: 'IwAR123', eventTime: NOW });
    expect(q.missing).toContain('clickId');
    expect(q.warnings[0]).toMatchObject({ code: 'fbc_malformed' });
    expect(q.warnings[0]?.message).toContain('fbclid not in fbc format');
  });

  it('an email that is not an address and a phone without country code count as missing, with warnings', () => {
    const q = scoreMatch('google_ads', {
      clickId: 'Cj0',
      userIdentifiersAccepted: true,
      customerData: { email: 'nobody', phone: '030 1234567' },
      eventTime: NOW,
    });
    expect(q.keys).toEqual(['clickId']);
    expect(q.score).toBe(6);
    expect(q.warnings.map((w) => w.code)).toEqual(['email_invalid', 'phone_without_country_code']);
    expect(q.warnings[0]?.message).toContain('email not a valid address');
    expect(q.warnings[1]?.message).toContain('phone without country code');
  });

  it('a phone with customerData.country or a hashed value counts', () => {
    expect(scoreMatch('tiktok', { customerData: { phone: '030 1234567', country: 'DE' }, eventTime: NOW }).keys).toEqual([
      'phone',
    ]);
    expect(scoreMatch('tiktok', { customerData: { email: 'a'.repeat(64) }, eventTime: NOW }).keys).toEqual(['email']);
  });

  it('Google gets email and phone only with a gclid', () => {
    const data = { email: 'a@b.example', phone: '+14155550100' };
    expect(
      scoreMatch('google_ads', { clickId: 'x', userIdentifiersAccepted: false, customerData: data, eventTime: NOW }).score,
    ).toBe(6);
    expect(
      scoreMatch('google_ads', { clickId: 'x', userIdentifiersAccepted: true, customerData: data, eventTime: NOW }).score,
    ).toBe(10);
  });

  it('with user data denied, customer data, IP/UA and browser ids count as not sent, with a warning', () => {
    const signals = {
      clickId: 'tt1',
      customerData: { email: 'a@b.example' },
      ipAddress: '203.0.113.9',
      userAgent: 'UA',
      browserId: 'ttp1',
      eventTime: NOW,
    };
    expect(scoreMatch('tiktok', signals).score).toBe(8.5);
    const denied = scoreMatch('tiktok', signals, { userDataAllowed: false });
    expect(denied.keys).toEqual(['clickId']);
    expect(denied.score).toBe(3);
    expect(denied.warnings.at(-1)).toMatchObject({ code: 'user_data_denied' });
    expect(denied.warnings.at(-1)?.message).toContain('email, ipUserAgent, ttp');
  });
});

describe('signals of a stored conversion', () => {
  const conversion = {
    event_time: NOW,
    ref_fbc: null,
    ref_ids: JSON.stringify({ gbraid: 'GB1', ttclid: 'TT1' }),
    ip_address: null,
    user_agent: null,
    fbp: null,
    ttp: 'TTP1',
  } as unknown as ConversionsTable;
  const click = {
    fbc: `fb.1.${NOW}.abc`,
    ip_address: '203.0.113.9',
    user_agent: 'UA',
    fbp: 'fb.1.2.3',
    gclid: 'G1',
  } as unknown as ClicksTable;

  it('Meta takes the click’s fbc, IP, user agent and fbp', () => {
    const s = signalsFor('meta', conversion, click, undefined);
    expect(s).toMatchObject({ clickId: click.fbc, ipAddress: '203.0.113.9', userAgent: 'UA', browserId: 'fb.1.2.3' });
  });

  it('Google prefers the click’s gclid; without a click the explicit gbraid, which takes no identifiers', () => {
    expect(signalsFor('google_ads', conversion, click, undefined)).toMatchObject({
      clickId: 'G1',
      userIdentifiersAccepted: true,
    });
    expect(signalsFor('google_ads', conversion, undefined, undefined)).toMatchObject({
      clickId: 'GB1',
      userIdentifiersAccepted: false,
    });
  });

  it('a malformed fbc sent without a click is reported', () => {
    const q = matchQualityOf(['meta'], { ...conversion, ref_fbc: 'IwAR1' }, undefined, undefined);
    expect(q.meta?.warnings.map((w) => w.code)).toContain('fbc_malformed');
  });
});

describe('store view', () => {
  it('averages scores and gives the share missing per key and the best improvement', () => {
    const a = scoreMatch('meta', { clickId: `fb.1.${NOW}.a`, customerData: { email: 'a@b.example' }, eventTime: NOW });
    const b = scoreMatch('meta', {
      customerData: { email: 'b@b.example' },
      ipAddress: '1.2.3.4',
      userAgent: 'UA',
      eventTime: NOW,
    });
    const view = summarizeMatchQuality([JSON.stringify({ meta: a }), JSON.stringify({ meta: b }), null]);
    expect(a.score).toBe(6);
    expect(b.score).toBe(4.5);
    expect(view.meta).toMatchObject({
      conversions: 2,
      averageScore: 5.25,
      missing: { clickId: 0.5, email: 0, phone: 1, ipUserAgent: 0.5, fbp: 1, address: 1 },
      warnings: { ip_user_agent_missing: 1 },
    });
    expect(view.meta?.improvements[0]).toEqual({ key: 'clickId', scoreGain: 1.5 });
    expect(view.meta?.improvements[1]).toEqual({ key: 'phone', scoreGain: 1.5 });
    expect(view.google_ads).toBeUndefined();
  });
});
