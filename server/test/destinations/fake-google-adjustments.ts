import type { Json } from './fake-platforms.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
const ACTION = /^customers\/\d{10}\/conversionActions\/\d+$/;

/** What Google holds of an uploaded conversion (by conversion action and orderId), as adjustments change it. */
export interface GoogleConversionState {
  value: number;
  currency: string;
  retracted: boolean;
  /** Every adjustment applied, in order. */
  adjustments: Json[];
}

/**
 * The rows of `customers/{id}:uploadConversionAdjustments` (ConversionAdjustmentUploadService)
 * as Google checks them: an adjustment by `orderId` of a conversion it does not have is
 * CONVERSION_NOT_FOUND, one of a retracted conversion CONVERSION_ALREADY_RETRACTED, a
 * RESTATEMENT needs `restatementValue.adjustedValue`; `validateOnly` changes nothing.
 */
export function adjustRows(
  adjustments: Json[],
  conversions: Map<string, GoogleConversionState>,
  validateOnly: boolean,
): { errors: Json[]; refused: Map<number, string>; results: Json[] } {
  const errors: Json[] = [];
  const refused = new Map<number, string>();
  const results: Json[] = [];
  adjustments.forEach((a, index) => {
    const location = { fieldPathElements: [{ fieldName: 'conversion_adjustments', index }] };
    const state = conversions.get(`${a.conversionAction}\n${a.orderId}`);
    let problem: Json | undefined;
    if (!ACTION.test(String(a.conversionAction)))
      problem = {
        errorCode: { conversionAdjustmentUploadError: 'INVALID_CONVERSION_ACTION' },
        message: 'Invalid conversion action.',
      };
    else if (a.adjustmentType !== 'RETRACTION' && a.adjustmentType !== 'RESTATEMENT')
      problem = { errorCode: { requestError: 'INVALID_ENUM_VALUE' }, message: 'Unsupported adjustmentType.' };
    else if (!DATE_TIME.test(String(a.adjustmentDateTime)))
      problem = {
        errorCode: { dateError: 'INVALID_STRING_DATE_TIME' },
        message: 'adjustmentDateTime is not yyyy-mm-dd hh:mm:ss+|-hh:mm.',
      };
    else if (typeof a.orderId !== 'string' || a.gclidDateTimePair)
      problem = { errorCode: { conversionAdjustmentUploadError: 'MISSING_ORDER_ID' }, message: 'orderId is required.' };
    else if (
      a.adjustmentType === 'RESTATEMENT' &&
      (typeof a.restatementValue?.adjustedValue !== 'number' || typeof a.restatementValue?.currencyCode !== 'string')
    )
      problem = { errorCode: { conversionAdjustmentUploadError: 'RESTATEMENT_VALUE_MISSING' }, message: 'No restatement value.' };
    else if (a.adjustmentType === 'RETRACTION' && a.restatementValue)
      problem = { errorCode: { conversionAdjustmentUploadError: 'INVALID_ADJUSTMENT' }, message: 'A retraction has no value.' };
    else if (!state)
      problem = {
        errorCode: { conversionAdjustmentUploadError: 'CONVERSION_NOT_FOUND' },
        message: 'The conversion for this adjustment was not found.',
      };
    else if (state.retracted)
      problem = {
        errorCode: { conversionAdjustmentUploadError: 'CONVERSION_ALREADY_RETRACTED' },
        message: 'The conversion was already retracted.',
      };
    if (problem) {
      errors.push({ ...problem, location });
      refused.set(index, problem.message);
      results.push({});
      return;
    }
    if (!validateOnly && state) {
      state.adjustments.push(a);
      if (a.adjustmentType === 'RETRACTION') state.retracted = true;
      else state.value = a.restatementValue.adjustedValue;
    }
    results.push({ orderId: a.orderId, conversionAction: a.conversionAction, adjustmentType: a.adjustmentType });
  });
  return { errors, refused, results };
}
