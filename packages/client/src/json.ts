// One JSON token the parser cares about: a whole string (skipped as is, so digits inside strings
// are never touched) or a number in JSON's grammar (no leading zeros, optional fraction/exponent).
const TOKEN = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * `JSON.parse`, except that an integer too large for a double to hold exactly (beyond
 * ±(2^53 − 1): Shopify's order, line item and customer ids are) comes back as its exact decimal
 * text, a string, instead of a rounded number. Smaller integers and every number written with a
 * fraction or an exponent are numbers as usual. So `String(value)` of any id is its exact text:
 *
 * ```js
 * parseJsonExact('{"id":820982911946154508}').id;   // '820982911946154508'
 * JSON.parse('{"id":820982911946154508}').id;        // 820982911946154500 — another order
 * ```
 *
 * Invalid JSON throws the `SyntaxError` that `JSON.parse` throws.
 */
export function parseJsonExact<T = unknown>(text: string): T {
  // Quoting the unsafe integers before JSON.parse sees them keeps them exact everywhere (Node ≥ 18
  // and every browser), where JSON.parse's reviver `context.source` is newer than both. JSON.parse
  // still validates the whole text: a token only gains quotes where a number stood.
  const quoted = text.replace(TOKEN, (token) =>
    token.charCodeAt(0) === 0x22 || /[.eE]/.test(token) || Number.isSafeInteger(Number(token)) ? token : `"${token}"`,
  );
  return JSON.parse(quoted) as T;
}
