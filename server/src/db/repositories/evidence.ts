import type { Reader } from '../database.js';
import { type EvidenceClick, type EvidenceClicks, type EvidenceLookup, engineOf } from '../engine.js';

export type { EvidenceClick, EvidenceClicks, EvidenceLookup };

/**
 * The clicks that may explain a conversion: each an index-backed lookup of one exact key (inside
 * the time bounds for the signals). On SQLite one statement per lookup (db/sqlite/evidence.ts:
 * in-process, each costs microseconds); on PostgreSQL every lookup in one statement
 * (db/postgres/evidence.ts), since there each statement is a round trip whose cost, on both
 * sides, was most of a conversion's.
 */
export async function evidenceClicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
  return engineOf(db).evidence.clicks(db, lookup);
}
