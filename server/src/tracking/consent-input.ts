import {
  type ConsentInput,
  consentColumn,
  type LimitedDataUse,
  limitedDataUseColumn,
  resolveConsent,
  storeDefaultOf,
  US_STATE_CODES,
} from '../consent/consent.js';
import type { StoresTable } from '../db/schema.js';
import { invalid } from '../http/errors.js';

/** An event's consent fields as the API takes them (api.md §10). */
export interface ConsentFields {
  consent?: ConsentInput;
  limitedDataUse?: LimitedDataUse;
}

/** Throws the API's field error for a limited-data-use place that is not a US state. */
export function checkLimitedDataUse(value: LimitedDataUse | undefined, path = 'limitedDataUse'): void {
  if (value === undefined || value === true) return;
  const country = value.country?.toUpperCase();
  if (country !== undefined && country !== 'US') {
    throw invalid(`${path}.country`, 'unknown_value', `${path}.country must be US: limited data use applies to US states only`);
  }
  const state = value.state?.toUpperCase();
  if (state !== undefined && !US_STATE_CODES.includes(state)) {
    throw invalid(
      `${path}.state`,
      'unknown_value',
      `${path}.state must be a US state's 2-letter code like CA (${value.state} is not)`,
    );
  }
}

/** The consent columns of an event about to be recorded: its consent resolved against the store's default. */
export function consentColumns(
  input: ConsentFields,
  store: StoresTable,
): { consent: string | null; limited_data_use: string | null } {
  return {
    consent: consentColumn(resolveConsent(input.consent, storeDefaultOf(store.default_consent))),
    limited_data_use: limitedDataUseColumn(input.limitedDataUse),
  };
}
