/** Meta's standard event names (api.md §2, POST /v1/track/conversion). */
export const STANDARD_EVENTS = [
  'Purchase',
  'Lead',
  'CompleteRegistration',
  'AddToCart',
  'InitiateCheckout',
  'AddPaymentInfo',
  'Subscribe',
  'StartTrial',
  'ViewContent',
  'Search',
  'Contact',
  'SubmitApplication',
  'Schedule',
  'AddToWishlist',
  'Donate',
  'CustomizeProduct',
  'FindLocation',
] as const;

const BY_LOWER_CASE = new Map<string, string>(STANDARD_EVENTS.map((name) => [name.toLowerCase(), name]));

/**
 * A standard event name written in another case (`purchase`, `ADDTOCART`) means the standard
 * event: stored, counted and sent to Meta under its standard spelling, so a lower-case
 * `purchase` still counts as revenue. Only the case is forgiven (`add_to_cart` stays a custom
 * event); every other name is kept exactly as given.
 */
export function normalizeEventType(eventType: string): string {
  return BY_LOWER_CASE.get(eventType.toLowerCase()) ?? eventType;
}
