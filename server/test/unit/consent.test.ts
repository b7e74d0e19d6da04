// Consent as data (api.md §10): the pure parts — the server's consent module and the tag's reading of the page's consent.
import { describe, expect, it } from 'vitest';
import { gtagConsent, mergeConsent, consentOf as pageConsentOf } from '../../../packages/tag/src/consent.js';
import {
  consentColumn,
  consentOf,
  consentView,
  limitedDataUseColumn,
  metaProcessingOptions,
  resolveConsent,
  withoutClickIds,
} from '../../src/consent/consent.js';
import type { ClicksTable, ConversionsTable } from '../../src/db/schema.js';

describe('resolving and storing consent', () => {
  it("fills each field left out from the store's default, then granted", () => {
    expect(resolveConsent({ adStorage: 'denied' }, { adUserData: 'denied', adStorage: 'granted' })).toEqual({
      adStorage: 'denied',
      adUserData: 'denied',
      adPersonalization: 'granted',
    });
    expect(resolveConsent(undefined, undefined)).toEqual({
      adStorage: 'granted',
      adUserData: 'granted',
      adPersonalization: 'granted',
    });
  });

  it('stores null for all granted (as events recorded before consent read) and the resolved JSON otherwise', () => {
    expect(consentColumn(resolveConsent({}, undefined))).toBeNull();
    const denied = consentColumn(resolveConsent({ adPersonalization: 'denied' }, undefined));
    expect(consentOf(denied)).toEqual({ adStorage: 'granted', adUserData: 'granted', adPersonalization: 'denied' });
    expect(consentOf(null).adUserData).toBe('granted');
  });

  it('limited data use: US state implied by a state, Meta codes, 0 to geolocate', () => {
    expect(limitedDataUseColumn({ state: 'ca' })).toBe('{"country":"US","state":"CA"}');
    expect(limitedDataUseColumn(undefined)).toBeNull();
    expect(metaProcessingOptions({ country: 'US', state: 'CT' })).toEqual({
      data_processing_options: ['LDU'],
      data_processing_options_country: 1,
      data_processing_options_state: 1002,
    });
    expect(metaProcessingOptions(true)).toMatchObject({ data_processing_options_country: 0, data_processing_options_state: 0 });
    expect(metaProcessingOptions({ country: 'US', state: 'NY' })).toMatchObject({ data_processing_options_state: 0 });
    expect(metaProcessingOptions(undefined)).toBeUndefined();
  });
});

describe('what may be sent', () => {
  it('removes every click-id parameter from a URL and keeps the rest as written', () => {
    expect(
      withoutClickIds('https://s.test/p?a=1&fbclid=F&gclid=G&wbraid=W&gbraid=B&ttclid=T&msclkid=M&dclid=D&_gl=x&b=2#top'),
    ).toBe('https://s.test/p?a=1&b=2#top');
    expect(withoutClickIds('https://s.test/p?utm_source=x')).toBe('https://s.test/p?utm_source=x');
  });

  const click = {
    fbclid: 'F',
    fbc: 'fb.1.1.F',
    gclid: 'G',
    ttclid: 'T',
    ip_address: '1.2.3.4',
    user_agent: 'UA',
    fbp: 'fb.1.1.2',
    ttp: 'ttp',
    fingerprint: 'fp',
    derived_fingerprint: 'dfp',
    landing_page: 'https://s.test/?fbclid=F&x=1',
    consent: null,
    limited_data_use: null,
  } as unknown as ClicksTable;
  const conversion = {
    user_data: '{"em":"h"}',
    email_hash: 'h',
    phone_hash: null,
    ip_address: '5.6.7.8',
    user_agent: 'UA2',
    fingerprint: 'fp',
    fbp: 'fb.1.1.3',
    ttp: 'ttp2',
    ref_fbc: 'fb.1.1.R',
    ref_fbclid: 'R',
    ref_ids: '{"gclid":"RG"}',
    event_source_url: 'https://s.test/thanks?gclid=RG',
    consent: null,
    limited_data_use: '{"country":"US","state":"CA"}',
  } as unknown as ConversionsTable;

  it('all granted: everything as stored, LDU for Meta', () => {
    const view = consentView(conversion, click, { email: 'a@b.test' });
    expect(view.conversion).toEqual(conversion);
    expect(view.click).toEqual(click);
    expect(view.customerData).toEqual({ email: 'a@b.test' });
    expect(view.adUserData).toBe('GRANTED');
    expect(view.meta?.data_processing_options_state).toBe(1000);
  });

  it("the click's denied user data blanks what the click contributes, not the conversion's own", () => {
    const view = consentView(conversion, { ...click, consent: '{"adUserData":"denied"}' });
    expect(view.click).toMatchObject({ ip_address: null, user_agent: null, fbp: null, ttp: null, fingerprint: null, gclid: 'G' });
    expect(view.conversion.ip_address).toBe('5.6.7.8');
    expect(view.adUserData).toBe('GRANTED');
  });

  it("the conversion's denied ad storage withholds every click id, its own and its click's, and the URLs' ids", () => {
    const view = consentView({ ...conversion, consent: '{"adStorage":"denied"}' }, click);
    expect(view.conversion).toMatchObject({
      ref_fbc: null,
      ref_fbclid: null,
      ref_ids: null,
      event_source_url: 'https://s.test/thanks',
    });
    expect(view.click).toMatchObject({ fbc: '', gclid: null, ttclid: null, landing_page: 'https://s.test/?x=1' });
    expect(view.clickIdsWithheld).toBe(true);
    expect(view.conversion.ip_address).toBe('5.6.7.8');
  });
});

describe("the tag's reading of the page's consent", () => {
  it('takes its own names and Consent Mode names, ignores anything else', () => {
    expect(
      pageConsentOf({ adStorage: 'denied', ad_user_data: 'granted', analytics_storage: 'denied', adPersonalization: 'no' }),
    ).toEqual({
      adStorage: 'denied',
      adUserData: 'granted',
    });
    expect(pageConsentOf('denied')).toEqual({});
  });

  it("applies gtag's consent commands in order, skipping region-only defaults", () => {
    const args = (...values: unknown[]) =>
      (function (this: unknown) {
        // biome-ignore lint/complexity/noArguments: gtag pushes its arguments object, as this does
        return arguments;
      })(...(values as []));
    const dataLayer = [
      args('consent', 'default', { ad_storage: 'denied', ad_user_data: 'denied' }),
      args('consent', 'default', { ad_personalization: 'denied', region: ['DE'] }),
      { event: 'gtm.js' },
      args('config', 'G-1'),
      args('consent', 'update', { ad_storage: 'granted' }),
    ];
    expect(gtagConsent(dataLayer)).toEqual({ adStorage: 'granted', adUserData: 'denied' });
    expect(gtagConsent(undefined)).toEqual({});
    expect(mergeConsent({ adStorage: 'granted' }, { adStorage: 'denied' })).toEqual({ adStorage: 'denied' });
  });
});
