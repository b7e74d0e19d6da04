// Every code example in the documentation reads ids exactly (issue 37, point 12): shop ids exceed
// 2^53, so an example that parses a shop payload with JSON.parse, decodes it in PHP without
// JSON_BIGINT_AS_STRING, or passes an id through a float, teaches readers to record the wrong
// order. Engine-independent: SQLite pass only.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENGINE } from '../engine.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** docs/*.md, README.md, and every README of sdks/* and packages/*. */
function documents(): string[] {
  const inDir = (dir: string, keep: (name: string) => boolean) =>
    existsSync(path.join(ROOT, dir))
      ? readdirSync(path.join(ROOT, dir))
          .filter(keep)
          .map((f) => path.join(dir, f))
      : [];
  const readmes = ['sdks', 'packages'].flatMap((dir) =>
    inDir(dir, () => true).flatMap((sub) => inDir(sub, (name) => /^readme/i.test(name))),
  );
  return ['README.md', ...inDir('docs', (name) => name.endsWith('.md')), ...readmes];
}

/** Fenced code blocks with their language and first line number. */
function codeBlocks(text: string): Array<{ lang: string; line: number; code: string }> {
  const blocks: Array<{ lang: string; line: number; code: string }> = [];
  const fence = /^( *)```(\w*)[^\n]*\n([\s\S]*?)^\1```/gm;
  for (const match of text.matchAll(fence)) {
    blocks.push({ lang: match[2] ?? '', line: text.slice(0, match.index).split('\n').length, code: match[3] ?? '' });
  }
  return blocks;
}

// Waytrack's own answers carry ids as strings and no integer beyond 2^53: parsing them with
// JSON.parse is exact. The README's `api` shell helper does just that.
const WAYTRACK_ANSWER_PARSERS = ['body = JSON.parse(text)'];

const RULES: Array<{ why: string; bad: (line: string) => boolean }> = [
  {
    why: 'JSON.parse rounds integers beyond 2^53: use parseJsonExact from @waytrack/client',
    bad: (line) => line.includes('JSON.parse(') && !WAYTRACK_ANSWER_PARSERS.some((ok) => line.includes(ok)),
  },
  {
    why: 'json_decode without JSON_BIGINT_AS_STRING rounds integers beyond PHP_INT_MAX',
    bad: (line) => line.includes('json_decode(') && !line.includes('JSON_BIGINT_AS_STRING'),
  },
  {
    why: 'an id through a float loses digits',
    bad: (line) =>
      /\b(?:Number|parseFloat|parseInt|float)\(\s*[\w.$[\]'"]*(?:\b|_)id\b['"\]]*\s*\)/i.test(line) ||
      /\(float\)\s*\$[\w\->[\]'"]*id\b/i.test(line),
  },
];

describe.skipIf(ENGINE === 'postgres')('documentation examples read ids exactly', () => {
  it('no example parses a payload with JSON.parse, json_decode without JSON_BIGINT_AS_STRING, or floats an id', () => {
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/integrations.md', 'packages/client/README.md']));
    const offences: string[] = [];
    let blocks = 0;
    for (const file of files) {
      for (const block of codeBlocks(readFileSync(path.join(ROOT, file), 'utf8'))) {
        blocks += 1;
        block.code.split('\n').forEach((line, i) => {
          for (const rule of RULES)
            if (rule.bad(line)) offences.push(`${file}:${block.line + 1 + i}: ${rule.why}: ${line.trim()}`);
        });
      }
    }
    expect(blocks).toBeGreaterThan(20);
    expect(offences).toEqual([]);
  });

  it('the rules catch what they are for', () => {
    const caught = (line: string) => RULES.filter((rule) => rule.bad(line)).length;
    expect(caught("const order = JSON.parse(req.body.toString('utf8'));")).toBe(1);
    expect(caught('$order = json_decode($body, true);')).toBe(1);
    expect(caught('orderId: String(Number(order.id)),')).toBe(1);
    expect(caught("order_id=str(float(order['id'])),")).toBe(1);
    expect(caught("'orderId' => (string) (float) $order['id'],")).toBe(1);
    expect(caught("const order = parseJsonExact(req.body.toString('utf8'));")).toBe(0);
    expect(caught('$order = json_decode($body, true, 512, JSON_BIGINT_AS_STRING);')).toBe(0);
    expect(caught('eventValue: Number(order.total_price),')).toBe(0);
    expect(caught("'eventValue' => (float) $order->get_total(),")).toBe(0);
  });

  it('the Shopify backend example parses the order with parseJsonExact', () => {
    const text = readFileSync(path.join(ROOT, 'docs/integrations.md'), 'utf8');
    const shopify = codeBlocks(text).find((b) => b.code.includes('X-Shopify-Hmac-Sha256'));
    expect(shopify?.code).toContain("import { parseJsonExact, Waytrack, WaytrackError } from '@waytrack/client';");
    expect(shopify?.code).toMatch(/const order = parseJsonExact\(req\.body\.toString\('utf8'\)\);/);
  });
});
