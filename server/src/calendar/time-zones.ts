/**
 * Which time zone a store's `timezone` names, and whether it names it the current way.
 *
 * The platform (ICU) accepts every IANA name, old spellings included, and resolves each to
 * its own canonical id. That id is not always IANA's current name: ICU keeps the older
 * spelling of renamed cities (Asia/Calcutta for Asia/Kolkata), and browsers report that
 * spelling as the visitor's zone. Both spellings of a renamed city are the zone's own name;
 * any other name that resolves elsewhere (US/Eastern, GB, EST, EST5EDT) is a legacy alias.
 */
import { canonicalTimeZone } from './dates.js';

/** ICU's spelling → IANA's current name, for the zones IANA renamed and ICU did not. */
const RENAMED: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Godthab': 'America/Nuuk',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Rangoon': 'Asia/Yangon',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
};

/**
 * Abbreviations a person types meaning a region's local time, which IANA defines as fixed
 * offsets without daylight saving: the zone they resolve to (EST → America/Panama) is
 * rarely what was meant, so the suggestion names the region's zone and the message says both.
 */
const FIXED_OFFSET_ABBREVIATIONS: Readonly<Record<string, { suggestion: string; fixed: string; offset: string }>> = {
  EST: { suggestion: 'America/New_York', fixed: 'America/Panama', offset: 'UTC−05:00' },
  MST: { suggestion: 'America/Denver', fixed: 'America/Phoenix', offset: 'UTC−07:00' },
};

export type TimeZoneCheck =
  | { kind: 'zone'; zone: string }
  | { kind: 'legacy_alias'; suggestion: string; message: string }
  | { kind: 'unknown' };

const currentName = (zone: string) => RENAMED[zone] ?? zone;

/**
 * A store time zone as given: a zone's own name (any case, either spelling of a renamed city)
 * → the zone under IANA's current name; UTC under any of its names → `UTC`; a legacy alias →
 * the zone to use instead; anything the platform does not know → unknown.
 */
export function checkTimeZone(given: string): TimeZoneCheck {
  const resolved = canonicalTimeZone(given);
  if (!resolved) return { kind: 'unknown' };
  const zone = currentName(resolved);
  // UTC, Etc/UTC, GMT, Zulu …: one meaning only, nothing to misunderstand.
  if (zone === 'UTC') return { kind: 'zone', zone };
  const abbreviation = FIXED_OFFSET_ABBREVIATIONS[given.toUpperCase()];
  if (abbreviation) {
    return {
      kind: 'legacy_alias',
      suggestion: abbreviation.suggestion,
      message:
        `${given} is a legacy alias for a fixed ${abbreviation.offset} offset without daylight saving: ` +
        `use ${abbreviation.suggestion} for the region's local time, or ${abbreviation.fixed} for ${abbreviation.offset} all year`,
    };
  }
  // Every current zone is Area/Location; names without an area (GB, Japan, CET, EST5EDT) are all aliases.
  const lower = given.toLowerCase();
  const spellings = [resolved, zone, ...Object.keys(RENAMED).filter((old) => RENAMED[old] === zone)];
  if (given.includes('/') && spellings.some((name) => name.toLowerCase() === lower)) return { kind: 'zone', zone };
  return { kind: 'legacy_alias', suggestion: zone, message: `${given} is a legacy alias: use ${zone}` };
}
