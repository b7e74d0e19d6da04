import { describe, expect, it } from 'vitest';
import { dateIn, startOfDay } from '../../src/calendar/dates.js';
import { Zone, zoneOf } from '../../src/calendar/zone.js';

/** Labels of the hourly buckets of one local date, checking that hourStart agrees with nextHour. */
function hoursOf(timeZone: string, date: string, next: string): string[] {
  const zone = new Zone(timeZone);
  const labels: string[] = [];
  for (let b = zone.dayStart(date); b < zone.dayStart(next); b = zone.nextHour(b)) {
    expect(zone.hourStart(b)).toBe(b);
    expect(zone.hourStart(zone.nextHour(b) - 1)).toBe(b);
    expect(zone.date(b)).toBe(date);
    labels.push(zone.label(b));
  }
  return labels;
}

describe('Zone', () => {
  it('has 24 hourly buckets on an ordinary day, 25 when the clocks go back and 23 when they go forward', () => {
    expect(hoursOf('America/New_York', '2026-11-10', '2026-11-11')).toHaveLength(24);
    const back = hoursOf('America/New_York', '2026-11-01', '2026-11-02');
    expect(back).toHaveLength(25);
    expect(back.slice(0, 4)).toEqual([
      '2026-11-01T00:00-04:00',
      '2026-11-01T01:00-04:00',
      '2026-11-01T01:00-05:00',
      '2026-11-01T02:00-05:00',
    ]);
    const forward = hoursOf('Europe/Berlin', '2026-03-29', '2026-03-30');
    expect(forward).toHaveLength(23);
    expect(forward.slice(1, 3)).toEqual(['2026-03-29T01:00+01:00', '2026-03-29T03:00+02:00']);
  });

  it('starts hours at :30 and :45 UTC in zones with such offsets', () => {
    const kolkata = new Zone('Asia/Kolkata');
    expect(new Date(kolkata.hourStart(Date.parse('2026-11-10T05:29:59Z'))).toISOString()).toBe('2026-11-10T04:30:00.000Z');
    expect(new Date(kolkata.hourStart(Date.parse('2026-11-10T05:30:00Z'))).toISOString()).toBe('2026-11-10T05:30:00.000Z');
    expect(hoursOf('Asia/Kathmandu', '2026-11-10', '2026-11-11')[0]).toBe('2026-11-10T00:00+05:45');
    expect(new Date(startOfDay('2026-11-10', 'Asia/Kathmandu')).toISOString()).toBe('2026-11-09T18:15:00.000Z');
  });

  it('starts a bucket where the offset changes inside a wall-clock hour (Lord Howe: 30-minute DST)', () => {
    const labels = hoursOf('Australia/Lord_Howe', '2026-10-04', '2026-10-05');
    expect(labels.slice(0, 4)).toEqual([
      '2026-10-04T00:00+10:30',
      '2026-10-04T01:00+10:30',
      '2026-10-04T02:30+11:00',
      '2026-10-04T03:00+11:00',
    ]);
    expect(labels).toHaveLength(24);
  });

  it('begins a day whose midnight is skipped when the clocks jump (America/Santiago)', () => {
    // 2026-09-06: 24:00 → 01:00 local
    expect(new Date(startOfDay('2026-09-06', 'America/Santiago')).toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(dateIn(Date.parse('2026-09-06T03:59:59.999Z'), 'America/Santiago')).toBe('2026-09-05');
    expect(hoursOf('America/Santiago', '2026-09-06', '2026-09-07')[0]).toBe('2026-09-06T01:00-03:00');
  });

  it('handles local mean time offsets with seconds, and old dates', () => {
    // New York used LMT (-4:56:02) until noon on 1883-11-18
    expect(hoursOf('America/New_York', '1883-11-18', '1883-11-19')).toHaveLength(25);
    const zone = zoneOf('America/New_York');
    const noonLmt = Date.parse('1883-11-18T16:56:02Z');
    expect(zone.date(noonLmt)).toBe('1883-11-18');
    expect(zone.hourStart(noonLmt + 1000)).toBe(noonLmt);
    expect(new Date(startOfDay('1883-11-18', 'America/New_York')).toISOString()).toBe('1883-11-18T04:56:02.000Z');
    expect(zoneOf('UTC').label(Date.parse('0100-01-01T00:00:00Z'))).toBe('0100-01-01T00:00+00:00');
  });

  it('agrees with the platform on the date of any instant', () => {
    const zones = ['America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati', 'Pacific/Honolulu', 'Europe/London'];
    for (const tz of zones) {
      const zone = new Zone(tz);
      const format = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
      for (let t = Date.parse('2026-01-01T00:00:00Z'); t < Date.parse('2027-01-01T00:00:00Z'); t += 7_919_000) {
        expect(zone.date(t)).toBe(format.format(t));
      }
    }
  });
});
