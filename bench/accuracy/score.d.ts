// Types of score.js for the tests that import it.
import type { Played } from './drive.js';
import type { OrderEvent, Traffic } from './generate.js';

export interface Rates {
  orders: number;
  credited: number;
  precision: number;
  recall: number;
  clicklessCredited: number;
}
export interface Band {
  band: number;
  n: number;
  stated: number;
  observed: number;
}
export interface Outcome {
  event: OrderEvent;
  truth: number | null;
  credited: number | null;
  stated: number | null;
  best: number | null;
  kinds: string[];
}
export interface Run extends Rates {
  calibration: Band[];
  mechanisms: Array<{
    mechanism: string;
    n: number;
    right: number;
    missed: number;
    otherPerson: number;
    ownOlder: number;
    clickless: number;
  }>;
  outcomes: Outcome[];
}
export function rates(outcomes: Array<{ truth: number | null; credited: number | null }>): Rates;
export function atThreshold(run: Run, threshold: number): Rates;
export function baselines(traffic: Traffic): { clickId: Rates; ipUserAgent: Rates };
export function scoreRun(traffic: Traffic, played: Played): Run;
export function targetsMet(
  run: Run,
  base: { clickId: Rates },
  options?: { minBand?: number },
): { precision: boolean; calibration: boolean; worstBandGap: number; recall: boolean };
