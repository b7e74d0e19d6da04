/**
 * Wall-clock arithmetic in an IANA time zone, fast enough to run per stored row. A zone's UTC
 * offset is cached per 15-minute slot of UTC time (every zone in use changes offset on a quarter
 * hour): a UTC day with the same offset at both ends (no change: nearly all days) fills all its
 * slots at once; on a day with a change each slot is checked at both ends; a slot whose offset
 * is not constant (historical local mean time) is computed exactly, instant by instant.
 *
 * Local hours are the buckets of hourly analytics: a bucket starts where the wall clock enters a
 * new hour or where the zone's offset changes. So a day whose clocks go back has 25 buckets (the
 * repeated 01:00 hour twice, with different offsets), one whose clocks go forward has 23, and a
 * zone with a :30 offset (Asia/Kolkata) has hours starting at :30 UTC.
 */

const SLOT_MS = 15 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const SLOTS_PER_DAY = DAY_MS / SLOT_MS;
const MAX_CACHED_SLOTS = 500_000;

const mod = (a: number, n: number) => ((a % n) + n) % n;

export class Zone {
  private readonly format: Intl.DateTimeFormat;
  /** slot index → offset in ms; NaN for a slot whose offset changes inside it. */
  private readonly slots = new Map<number, number>();

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
  }

  /** The offset at an instant, straight from the platform's time zone data (slow: ~10 µs). */
  private exactOffset(ms: number): number {
    const p: Record<string, string> = {};
    for (const part of this.format.formatToParts(ms)) p[part.type] = part.value;
    const year = p.era === 'BC' || p.era === 'B' ? 1 - Number(p.year) : Number(p.year);
    const wall = new Date(0);
    wall.setUTCFullYear(year, Number(p.month) - 1, Number(p.day));
    wall.setUTCHours(Number(p.hour), Number(p.minute), Number(p.second), 0);
    return wall.getTime() - (ms - mod(ms, 1000));
  }

  /** UTC offset at an instant in ms (positive east of Greenwich). */
  offset(ms: number): number {
    const slot = Math.floor(ms / SLOT_MS);
    let cached = this.slots.get(slot);
    if (cached === undefined) {
      if (this.slots.size >= MAX_CACHED_SLOTS) this.slots.clear();
      // Most UTC days have no offset change at all: two lookups settle all 96 slots of one.
      const day = Math.floor(ms / DAY_MS);
      const first = this.exactOffset(day * DAY_MS);
      if (first === this.exactOffset(day * DAY_MS + DAY_MS - 1)) {
        for (let s = day * SLOTS_PER_DAY; s < (day + 1) * SLOTS_PER_DAY; s++) this.slots.set(s, first);
        cached = first;
      } else {
        const start = this.exactOffset(slot * SLOT_MS);
        cached = start === this.exactOffset(slot * SLOT_MS + SLOT_MS - 1) ? start : Number.NaN;
        this.slots.set(slot, cached);
      }
    }
    return Number.isNaN(cached) ? this.exactOffset(ms) : cached;
  }

  /** The local calendar date (YYYY-MM-DD) of an instant. */
  date(ms: number): string {
    return isoDate(ms + this.offset(ms));
  }

  /** The local wall-clock time of an instant, `YYYY-MM-DDTHH:MM±HH:MM` (minutes and offset included). */
  label(ms: number): string {
    const offset = this.offset(ms);
    const local = new Date(ms + offset).toISOString();
    const sign = offset < 0 ? '-' : '+';
    const minutes = Math.round(Math.abs(offset) / 60_000);
    return `${local.slice(0, 16)}${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  }

  /** Start of the local-hour bucket containing `ms`. */
  hourStart(ms: number): number {
    const offset = this.offset(ms);
    const mark = ms - mod(ms + offset, HOUR_MS);
    if (this.offset(mark) === offset) return mark;
    // The offset changed inside this wall-clock hour: the bucket starts at the change.
    return this.firstWhere(mark, ms, (t) => this.offset(t) === offset);
  }

  /** Start of the local-hour bucket after the one starting at (or containing) `ms`. */
  nextHour(ms: number): number {
    const offset = this.offset(ms);
    const mark = ms + HOUR_MS - mod(ms + offset, HOUR_MS);
    if (this.offset(mark - 1) === offset) return mark;
    return this.firstWhere(ms, mark - 1, (t) => this.offset(t) !== offset);
  }

  /** The first instant of a local calendar date (a date whose midnight is skipped starts when the clocks jump). */
  dayStart(date: string): number {
    const midnightUtc = Date.parse(`${date}T00:00:00Z`);
    const guess = midnightUtc - this.offset(midnightUtc);
    const instant = midnightUtc - this.offset(guess);
    if (this.date(instant) === date && this.date(instant - 1) < date) return instant;
    // No zone is more than 15 hours from UTC, so the day starts within 16 hours of midnight UTC.
    return this.firstWhere(midnightUtc - 16 * HOUR_MS, midnightUtc + 16 * HOUR_MS, (t) => this.date(t) >= date);
  }

  /**
   * The smallest instant in (lo, hi] satisfying `test`, which is false at `lo`, true at `hi`, and
   * changes once in between (offsets change at most once within an hour).
   */
  private firstWhere(lo: number, hi: number, test: (ms: number) => boolean): number {
    let a = lo;
    let b = hi;
    while (b - a > 1) {
      const m = a + Math.floor((b - a) / 2);
      if (test(m)) b = m;
      else a = m;
    }
    return b;
  }
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** YYYY-MM-DD of a UTC instant (years 0–9999). */
function isoDate(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

const zones = new Map<string, Zone>();

/** The shared, cached Zone for an IANA name (names are validated when a store is saved). */
export function zoneOf(name: string): Zone {
  let zone = zones.get(name);
  if (!zone) {
    zone = new Zone(name);
    zones.set(name, zone);
  }
  return zone;
}
