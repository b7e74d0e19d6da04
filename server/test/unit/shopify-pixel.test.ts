// The Shopify checkout pixel's own logic (packages/tag/src/shopify-pixel.ts), without a browser:
// what it makes of Shopify's checkout_completed payload and the sandbox's cookie API.
import { describe, expect, it } from 'vitest';
import {
  type CheckoutCompleted,
  checkoutBody,
  orderIdOf,
  type PixelApi,
  startPixel,
} from '../../../packages/tag/src/shopify-pixel.js';
import { shopifyOrderId } from '../../src/shops/pixel-checkout.js';

const event = (overrides: Partial<NonNullable<NonNullable<CheckoutCompleted['data']>['checkout']>> = {}): CheckoutCompleted => ({
  timestamp: '2026-11-28T10:00:00.000Z',
  context: {
    document: { location: { href: 'https://shop.example/checkouts/c/1/thank-you' } },
    navigator: { userAgent: 'Mozilla/5.0 Test' },
  },
  data: {
    checkout: {
      order: { id: '820982911946154508' },
      totalPrice: { amount: 59.9, currencyCode: 'EUR' },
      currencyCode: 'EUR',
      ...overrides,
    },
  },
});

const COOKIES = {
  _wt_vid: 'AbCdEfGhIjKlMnOpQrStUv',
  _fbc: 'fb.1.1764000000000.IwAR_abc',
  _fbp: 'fb.1.1764000000000.1234567890',
  _ttp: 'ttp-1',
  _gcl_aw: 'GCL.1764000000.Cj0K-g',
  _gcl_gb: '',
  _wt_wbraid: 'not valid!',
  _wt_ttclid: 'tt.1',
  _uetmsclkid: '_uetms1',
};

describe('the Shopify pixel', () => {
  it('reduces the order id to the digits the order webhook has, as the server does', () => {
    for (const [given, digits] of [
      ['820982911946154508', '820982911946154508'],
      ['gid://shopify/OrderIdentity/820982911946154508', '820982911946154508'],
      ['gid://shopify/Order/42', '42'],
      [12345, '12345'],
    ] as const) {
      expect(orderIdOf(given)).toBe(digits);
      expect(shopifyOrderId(String(given))).toBe(digits);
    }
    for (const bad of ['#1001', 'gid://shopify/Checkout/1', '', null, 1.5, undefined]) expect(orderIdOf(bad)).toBeNull();
  });

  it('maps the payload and the valid cookies to the checkout body; malformed cookies are left out', () => {
    expect(checkoutBody(event(), COOKIES, true)).toEqual({
      orderId: '820982911946154508',
      eventValue: 59.9,
      currency: 'EUR',
      eventId: '820982911946154508',
      eventSourceUrl: 'https://shop.example/checkouts/c/1/thank-you',
      userAgent: 'Mozilla/5.0 Test',
      timestamp: '2026-11-28T10:00:00.000Z',
      consent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' },
      visitorId: COOKIES._wt_vid,
      fbc: COOKIES._fbc,
      fbp: COOKIES._fbp,
      ttp: 'ttp-1',
      gclid: 'Cj0K-g',
      ttclid: 'tt.1',
      msclkid: 'ms1',
    });
    const odd = checkoutBody(event(), { _wt_vid: 'short', _fbc: 'fb.1.x.IwAR', _fbp: 'fbp', _ttp: '' }, undefined);
    expect(odd).toEqual({
      orderId: '820982911946154508',
      eventValue: 59.9,
      currency: 'EUR',
      eventId: '820982911946154508',
      eventSourceUrl: 'https://shop.example/checkouts/c/1/thank-you',
      userAgent: 'Mozilla/5.0 Test',
      timestamp: '2026-11-28T10:00:00.000Z',
    });
  });

  it('without marketing consent sends the order and the refusal only; nothing without an order or a total', () => {
    const body = checkoutBody(event(), COOKIES, false);
    expect(body?.consent).toEqual({ adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' });
    for (const field of ['visitorId', 'fbc', 'fbp', 'ttp', 'gclid']) expect(body).not.toHaveProperty(field);
    expect(checkoutBody(event({ order: {} }), COOKIES, true)).toBeNull();
    expect(checkoutBody(event({ totalPrice: { amount: 'n/a', currencyCode: 'EUR' } }), COOKIES, true)).toBeNull();
    expect(checkoutBody(event({ totalPrice: { amount: 10 }, currencyCode: undefined }), COOKIES, true)).toBeNull();
    expect(checkoutBody(event({ totalPrice: { amount: 10 } }), COOKIES, true)?.currency).toBe('EUR');
  });

  it('reads the cookies through the sandbox’s async API (a failing read is an absent cookie) and follows consent changes', async () => {
    const listeners: Record<string, (event: unknown) => void> = {};
    const asked: string[] = [];
    const api: PixelApi = {
      analytics: {
        subscribe: (name, callback) => {
          listeners[name] = callback as (event: unknown) => void;
        },
      },
      browser: {
        cookie: {
          get: async (name) => {
            asked.push(name);
            if (name === '_ttp') throw new Error('blocked');
            return (COOKIES as Record<string, string>)[name] ?? '';
          },
        },
      },
      init: { customerPrivacy: { marketingAllowed: false } },
    };
    const sent: Array<Record<string, unknown>> = [];
    startPixel(api, (body) => sent.push(body));
    listeners.checkout_completed?.(event());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked).toEqual([]);
    expect(sent[0]?.consent).toMatchObject({ adStorage: 'denied' });
    listeners.visitorConsentCollected?.({ customerPrivacy: { marketingAllowed: true } });
    listeners.checkout_completed?.(event());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked).toContain('_wt_vid');
    expect(sent[1]).toMatchObject({ visitorId: COOKIES._wt_vid, fbc: COOKIES._fbc, consent: { adStorage: 'granted' } });
    expect(sent[1]).not.toHaveProperty('ttp');
  });
});
