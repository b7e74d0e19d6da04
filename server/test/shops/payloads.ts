import { createHmac } from 'node:crypto';

/**
 * Webhook bodies modelled on the shops' documented payloads: Shopify's `orders/paid` (an Order of
 * the Admin REST API; Shopify's own sample order id 820982911946154508 is above 2^53) and
 * `refunds/create`, and WooCommerce's order webhook (the REST API v3 order).
 */

export const sign = (raw: string, secret: string) => createHmac('sha256', secret).update(raw).digest('base64');

/** Written as text: the ids must reach the server as the digits Shopify sends, not as a rounded double. */
export function shopifyOrderJson(
  overrides: {
    id?: string;
    test?: boolean;
    fbclid?: string;
    total?: string;
    processedAt?: string;
    /** The shop's currency (`currency`, `total_price_set.shop_money`); USD by default. */
    currency?: string;
    /** What the buyer paid in their own currency when it is not the shop's (Shopify Markets). */
    presentment?: { currency: string; total: string };
    financialStatus?: string;
  } = {},
) {
  const id = overrides.id ?? '820982911946154508';
  const landing = overrides.fbclid ? `/products/tent?utm_source=facebook&fbclid=${overrides.fbclid}` : '/products/tent';
  const currency = overrides.currency ?? 'USD';
  const total = overrides.total ?? '199.65';
  const presentment = overrides.presentment ?? { currency, total };
  return `{
  "id": ${id},
  "admin_graphql_api_id": "gid://shopify/Order/${id}",
  "app_id": 580111,
  "browser_ip": "203.0.113.7",
  "buyer_accepts_marketing": false,
  "cancel_reason": null,
  "cancelled_at": null,
  "cart_token": "68778783ad298f1c80c3bafcddeea02f",
  "checkout_id": 901414060,
  "client_details": {
    "accept_language": "en-US,en;q=0.9",
    "browser_height": 900,
    "browser_ip": "203.0.113.7",
    "browser_width": 1440,
    "session_hash": null,
    "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
  },
  "confirmed": true,
  "contact_email": "Jon@Example.com",
  "created_at": "2026-11-20T10:00:00-05:00",
  "currency": "${currency}",
  "current_total_price": "${total}",
  "email": "Jon@Example.com",
  "financial_status": "${overrides.financialStatus ?? 'paid'}",
  "landing_site": "${landing}",
  "name": "#9999",
  "note_attributes": [{ "name": "waytrack_fbp", "value": "fb.1.1795340461022.1116446470" }],
  "order_number": 1000,
  "phone": "+15551234567",
  "presentment_currency": "${presentment.currency}",
  "processed_at": "${overrides.processedAt ?? new Date(Date.now() - 60_000).toISOString()}",
  "referring_site": "https://www.facebook.com/",
  "source_name": "web",
  "subtotal_price": "179.65",
  "test": ${overrides.test ?? false},
  "total_price": "${total}",
  "total_price_set": {
    "shop_money": { "amount": "${total}", "currency_code": "${currency}" },
    "presentment_money": { "amount": "${presentment.total}", "currency_code": "${presentment.currency}" }
  },
  "total_tax": "0.00",
  "billing_address": {
    "first_name": "Jon", "last_name": "Snow", "address1": "123 Amoebobacterius Ave", "phone": "555-555-5555",
    "city": "Ottawa", "zip": "K2P 1L4", "province": "Ontario", "country": "Canada",
    "company": null, "name": "Jon Snow", "country_code": "CA", "province_code": "ON"
  },
  "customer": { "id": 706405506930370084, "email": "jon@example.com", "first_name": "Jon", "last_name": "Snow", "currency": "USD" },
  "line_items": [
    { "id": 866550311766439020, "product_id": 632910392, "variant_id": 808950810, "title": "IPod Nano - 8GB", "price": "59.00", "quantity": 1, "sku": "IPOD2008PINK" },
    { "id": 141249953214522974, "product_id": 9007199254740993123, "variant_id": 457924702, "title": "IPod Nano - 8GB", "price": "60.325", "quantity": 2, "sku": "IPOD2008BLACK" }
  ],
  "refunds": []
}`;
}

export function shopifyRefundJson(
  overrides: {
    id?: string;
    orderId?: string;
    amount?: string;
    test?: boolean;
    kind?: string;
    /** The transactions' currency: the order's presentment currency (the buyer's). */
    currency?: string;
    /** The shop's currency, for the line items' `shop_money`; the transactions' currency by default. */
    shopCurrency?: string;
    /** Refunded lines as Shopify prices them in both currencies (subtotal, tax); one of 59.00 by default. */
    lines?: Array<{ shop: string; presentment: string; taxShop?: string; taxPresentment?: string }>;
  } = {},
) {
  const id = overrides.id ?? '890088186047892319';
  const orderId = overrides.orderId ?? '820982911946154508';
  const currency = overrides.currency ?? 'USD';
  const shopCurrency = overrides.shopCurrency ?? currency;
  const money = (shop: string, presentment: string) =>
    `{ "shop_money": { "amount": "${shop}", "currency_code": "${shopCurrency}" }, "presentment_money": { "amount": "${presentment}", "currency_code": "${currency}" } }`;
  const lines = (overrides.lines ?? [{ shop: '59.00', presentment: '59.00' }]).map(
    (
      line,
      i,
    ) => `{ "id": ${487817672276298554n + BigInt(i)}, "quantity": 1, "line_item_id": 866550311766439020, "location_id": null, "restock_type": "no_restock", "subtotal": ${Number(line.presentment)}, "total_tax": ${Number(line.taxPresentment ?? '0')},
      "subtotal_set": ${money(line.shop, line.presentment)},
      "total_tax_set": ${money(line.taxShop ?? '0.00', line.taxPresentment ?? '0.00')} }`,
  );
  return `{
  "id": ${id},
  "order_id": ${orderId},
  "created_at": "2026-11-21T12:00:00-05:00",
  "note": "Things were damaged",
  "user_id": 548380009,
  "processed_at": "2026-11-21T12:00:00-05:00",
  "restock": false,
  "duties": [],
  "admin_graphql_api_id": "gid://shopify/Refund/${id}",
  "refund_line_items": [
    ${lines.join(',\n    ')}
  ],
  "transactions": [
    { "id": 245135917480734270, "order_id": ${orderId}, "kind": "${overrides.kind ?? 'refund'}", "gateway": "bogus", "status": "success", "message": "Bogus Gateway: Forced success", "created_at": "2026-11-21T12:00:00-05:00", "test": ${overrides.test ?? false}, "authorization": null, "currency": "${currency}", "amount": "${overrides.amount ?? '59.00'}", "parent_id": 801038806 }
  ],
  "order_adjustments": []
}`;
}

export function wooOrder(overrides: Record<string, unknown> = {}) {
  return {
    id: 727,
    parent_id: 0,
    number: '727',
    order_key: 'wc_order_58d2d042d1d',
    created_via: 'checkout',
    version: '9.4.0',
    status: 'processing',
    currency: 'EUR',
    date_created: '2026-11-20T15:00:00',
    date_created_gmt: new Date(Date.now() - 120_000).toISOString().slice(0, 19),
    date_modified_gmt: new Date(Date.now() - 60_000).toISOString().slice(0, 19),
    discount_total: '0.00',
    shipping_total: '10.00',
    total: '29.35',
    total_tax: '1.35',
    prices_include_tax: false,
    customer_id: 0,
    customer_ip_address: '198.51.100.23',
    customer_user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
    billing: {
      first_name: 'John',
      last_name: 'Doe',
      company: '',
      address_1: '969 Market',
      address_2: '',
      city: 'San Francisco',
      state: 'CA',
      postcode: '94103',
      country: 'US',
      email: 'john.doe@example.com',
      phone: '(555) 555-5555',
    },
    shipping: { first_name: 'John', last_name: 'Doe', city: 'San Francisco', state: 'CA', postcode: '94103', country: 'US' },
    payment_method: 'bacs',
    transaction_id: '',
    date_paid_gmt: new Date(Date.now() - 90_000).toISOString().slice(0, 19),
    meta_data: [
      { id: 13106, key: '_wc_order_attribution_session_entry', value: 'https://shop.example.com/?gclid=Cj0KCQiA_test-gclid' },
      { id: 13107, key: '_waytrack_fbc', value: 'fb.1.1795340467318.IwAR2F4-dbP0l7Mn1IawQQ' },
    ],
    line_items: [
      {
        id: 315,
        name: 'Woo Single #1',
        product_id: 93,
        variation_id: 0,
        quantity: 2,
        subtotal: '6.00',
        total: '6.00',
        sku: '',
        price: 3,
      },
      {
        id: 316,
        name: 'Ship Your Idea – Color: Black',
        product_id: 22,
        variation_id: 23,
        quantity: 1,
        total: '12.00',
        sku: 'SYI-BLK',
        price: 12,
      },
    ],
    refunds: [],
    ...overrides,
  };
}
