import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AmbiguityKind } from '../../src/ambiguity-keys.js';
import { type ClickFacts, type ConversionFacts, countsRead, scoreCandidates } from '../../src/attribution/model.js';

// SQLite reads an ambiguity count only for the kinds `countsRead` names (db/sqlite/evidence.ts):
// the scores, evidence and order of every candidate must be those computed with every count.
const DAY = 86_400_000;
const T = Date.UTC(2026, 10, 28, 12, 0, 0);
const IPS = ['10.0.0.1', '10.0.0.2', '2001:db8:1:2::5', '2001:db8:1:2::9'];
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 [FBAN/FBIOS;FBAV/489.0]',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0.0.0 Safari/537.36',
];
const FINGERPRINTS = ['fp_a', 'fp_b'];
const maybe = <T>(values: T[]) => fc.option(fc.constantFrom(...values), { nil: null });

const clickArb = fc.record({
  n: fc.integer({ min: 0, max: 1_000_000 }),
  age: fc.integer({ min: -5 * 60_000, max: 8 * DAY }),
  ipAddress: maybe(IPS),
  userAgent: maybe(AGENTS),
  fingerprint: maybe(FINGERPRINTS),
  derivedFingerprint: maybe(FINGERPRINTS),
  visitorId: maybe(['v1', 'v2', 'v3']),
  isBot: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
});
const countArb = fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined });

describe('countsRead', () => {
  it('scoring with only the counts it names equals scoring with every count', () => {
    fc.assert(
      fc.property(
        fc.array(clickArb, { maxLength: 8 }),
        fc.record({ ip: maybe(IPS), agent: maybe(AGENTS), fingerprint: maybe(FINGERPRINTS), explicit: fc.boolean() }),
        fc.record({ ip: countArb, ip_user_agent: countArb, fingerprint: countArb }),
        (rows, seen, counts) => {
          const clicks: ClickFacts[] = rows.map((r, i) => ({
            id: `cl_${i}_${r.n}`,
            fbclid: `fb_${i}`,
            storeId: 'st_a',
            livemode: true,
            clickTime: T - r.age,
            isBot: r.isBot,
            fingerprint: r.fingerprint,
            derivedFingerprint: r.derivedFingerprint,
            ipAddress: r.ipAddress,
            userAgent: r.userAgent,
            visitorId: r.visitorId,
          }));
          const base: ConversionFacts = {
            storeId: 'st_a',
            livemode: true,
            time: T,
            fbclids: seen.explicit && clicks.length > 0 ? ['fb_0'] : [],
            ...(seen.ip && { ipAddress: seen.ip }),
            ...(seen.agent && { userAgent: seen.agent }),
            ...(seen.fingerprint && { fingerprint: seen.fingerprint }),
            identityClickIds: new Set(),
          };
          const shared = Object.fromEntries(Object.entries(counts).filter(([, v]) => v !== undefined)) as Partial<
            Record<AmbiguityKind, number>
          >;
          const read = countsRead(clicks, base);
          const only = Object.fromEntries(Object.entries(shared).filter(([kind]) => read.has(kind as AmbiguityKind)));
          expect(scoreCandidates({ ...base, shared: only }, clicks, 7)).toEqual(scoreCandidates({ ...base, shared }, clicks, 7));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('names the IP count for a click on the same network, and nothing for a click with no shared value', () => {
    const conversion: ConversionFacts = {
      storeId: 'st_a',
      livemode: true,
      time: T,
      fbclids: [],
      ipAddress: '10.0.0.1',
      userAgent: AGENTS[0],
      fingerprint: 'fp_a',
      identityClickIds: new Set(),
    };
    const at = (overrides: Partial<ClickFacts>): ClickFacts => ({
      id: 'cl_1',
      fbclid: 'fb_1',
      storeId: 'st_a',
      livemode: true,
      clickTime: T - DAY,
      isBot: false,
      fingerprint: null,
      derivedFingerprint: null,
      ipAddress: null,
      userAgent: null,
      ...overrides,
    });
    expect([...countsRead([at({ ipAddress: '10.0.0.1', userAgent: AGENTS[0] })], conversion)].sort()).toEqual([
      'ip',
      'ip_user_agent',
    ]);
    expect([...countsRead([at({ derivedFingerprint: 'fp_a', ipAddress: '10.9.9.9' })], conversion)].sort()).toEqual([
      'ip',
      'ip_user_agent',
    ]);
    expect([...countsRead([at({ fingerprint: 'fp_a' })], conversion)]).toEqual(['fingerprint']);
    expect([...countsRead([at({ ipAddress: '10.0.0.2', fingerprint: 'fp_b' })], conversion)]).toEqual([]);
  });
});
