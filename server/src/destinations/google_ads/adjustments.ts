import { fromMinorUnits } from '../../money.js';
import type { Plan, RefundPlanInput } from '../adapter.js';

/**
 * A refund as Google Ads receives it (api.md §9): a ConversionAdjustment of
 * `ConversionAdjustmentUploadService.UploadConversionAdjustments` (REST: `POST
 * /{version}/customers/{customerId}:uploadConversionAdjustments`), identified by the order's
 * `orderId` and the conversion action the conversion was uploaded to. Fully refunded:
 * `RETRACTION` (value and count become zero); else `RESTATEMENT` with the value left after this
 * refund (the adjustment states the new total, it is not a delta), in the conversion's currency.
 */
export interface ConversionAdjustment {
  conversionAction: string;
  adjustmentType: 'RETRACTION' | 'RESTATEMENT';
  /** `yyyy-mm-dd hh:mm:ss+hh:mm` in the store's time zone; after the conversion's time. */
  adjustmentDateTime: string;
  orderId: string;
  restatementValue?: { adjustedValue: number; currencyCode: string };
}

/**
 * How long an adjustment is retried: Waytrack gives up 90 days after the refund (Google applies
 * its own age rules and answers with an error, recorded as `failed`).
 */
export const GOOGLE_ADJUSTMENT_MAX_AGE_MS = 90 * 86_400_000;

export function planAdjustment(
  input: RefundPlanInput<unknown>,
  dateTime: (ms: number, timezone: string) => string,
): Plan | undefined {
  const { store, conversion, refund, conversionPayload, now } = input;
  // The action the conversion was uploaded to; its job gone (retention), the store's for its eventType.
  const configured = (input.settings as { conversionAction: string | Record<string, string> }).conversionAction;
  const uploaded = (conversionPayload as { conversionAction?: unknown } | undefined)?.conversionAction;
  const action =
    typeof uploaded === 'string' ? uploaded : typeof configured === 'string' ? configured : configured[conversion.event_type];
  if (!action) return undefined;
  const remaining = conversion.value_minor - refund.refunded_after_minor;
  // Google refuses an adjustment dated at or before its conversion: a refund dated earlier is sent a second after it.
  const at = Math.max(refund.refund_time, conversion.event_time + 1000);
  const payload: ConversionAdjustment = {
    conversionAction: action,
    adjustmentType: remaining > 0 ? 'RESTATEMENT' : 'RETRACTION',
    adjustmentDateTime: dateTime(at, store.timezone),
    orderId: conversion.order_id,
    ...(remaining > 0 && {
      restatementValue: { adjustedValue: fromMinorUnits(remaining, conversion.currency), currencyCode: conversion.currency },
    }),
  };
  return { payload, expiresAt: now + GOOGLE_ADJUSTMENT_MAX_AGE_MS };
}
