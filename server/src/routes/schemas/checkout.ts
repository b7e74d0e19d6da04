import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';
import { OTHER_CLICK_ID_FIELDS } from './clicks.js';
import { ConversionBody, ConversionResult } from './conversions.js';

/** The schemas of POST /v1/track/checkout (routes/checkout.ts; api.md §13 "Shopify checkout"). */

const conversion = ConversionBody.properties;

export const CheckoutBody = Type.Object(
  {
    storeId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The store (active, of the key’s account). With a publishable key it may be left out: the key’s store.',
      examples: [EXAMPLE.storeId],
    }),
    orderId: Type.String({
      minLength: 1,
      maxLength: 255,
      // The same rule as shops/pixel-checkout.ts shopifyOrderId (surrounding spaces are trimmed there).
      pattern: '^\\s*(?:\\d{1,40}|gid://shopify/(?:Order|OrderIdentity)/\\d{1,40})\\s*$',
      description:
        'The Shopify order id, `event.data.checkout.order.id`: its decimal digits or a `gid://shopify/Order/<id>` / `gid://shopify/OrderIdentity/<id>` (the digits are kept). With the store it is the Purchase’s key: the order webhook’s conversion for it is the same conversion.',
      examples: ['820982911946154508'],
    }),
    eventValue: conversion.eventValue,
    currency: conversion.currency,
    eventId: conversion.eventId,
    visitorId: conversion.visitorId,
    fbc: conversion.fbc,
    fbp: conversion.fbp,
    ttp: conversion.ttp,
    fbclid: conversion.fbclid,
    ...OTHER_CLICK_ID_FIELDS,
    userAgent: conversion.userAgent,
    eventSourceUrl: conversion.eventSourceUrl,
    timestamp: conversion.timestamp,
    consent: conversion.consent,
  },
  {
    description:
      'A completed Shopify checkout as the buyer’s browser saw it (the checkout pixel’s `checkout_completed`). The IP address is the connection’s. Unknown fields are ignored; a field sent as null or "" counts as absent.',
    'x-examples': {
      pixel: {
        summary: 'From the Shopify checkout pixel',
        value: {
          storeId: EXAMPLE.storeId,
          orderId: '820982911946154508',
          eventValue: 59.9,
          currency: 'EUR',
          eventId: '820982911946154508',
          visitorId: 'wt.4f9c2a7d1e8b6c3f5a0d9e2b',
          fbc: EXAMPLE.fbc,
          fbp: EXAMPLE.fbp,
          userAgent: EXAMPLE.userAgent,
          eventSourceUrl: 'https://shop.acme-outdoor.com/checkouts/c/b6f1/thank-you',
          timestamp: EXAMPLE.conversionTime,
        },
      },
    },
  },
);

export const CheckoutResult = Type.Object({
  ...ConversionResult.properties,
  filled: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Only on a duplicate (the order was recorded before, e.g. by its webhook): the browser evidence this event added to it (visitorId, fbp, fbc, clickIds, …); the recorded money stays',
      examples: [['visitorId', 'fbc']],
    }),
  ),
  reattributed: Type.Boolean({
    description: 'true when the evidence this event added re-attributed the recorded conversion to a more probable click',
  }),
});
