// The tag's click ids and their cookies (packages/tag/src/click-ids.ts), as the server reads them.
import { describe, expect, it } from 'vitest';
import { CLICK_ID, clickIdsOf, ID_COOKIES, sentKey } from '../../../packages/tag/src/click-ids.js';
import { FBCLID_PATTERN } from '../../src/routes/schemas/clicks.js';
import { CLICK_ID_KINDS } from '../../src/tracking/click-ids.js';

describe('tag click ids', () => {
  it('reads the ten ids of a landing URL, leaving malformed ones out, as the server does', () => {
    expect(clickIdsOf('?gclid=G-1&ttclid=T.2&msclkid=m_3&fbclid=F&gbraid=bad%20id&wbraid=W')).toEqual({
      fbclid: 'F',
      gclid: 'G-1',
      wbraid: 'W',
      ttclid: 'T.2',
      msclkid: 'm_3',
    });
    expect(clickIdsOf('?utm_source=x')).toEqual({});
    expect(
      Object.keys(clickIdsOf('?fbclid=a&gclid=b&gbraid=c&wbraid=d&ttclid=e&msclkid=f&epik=g&ScCid=h&rdt_cid=i&li_fat_id=j')),
    ).toEqual([...CLICK_ID_KINDS]);
    // Names as the platforms write them: ScCid is case-sensitive.
    expect(clickIdsOf('?sccid=x&epik=dj0yJnU9Q&li_fat_id=9c1e-2b&rdt_cid=1234.5')).toEqual({
      epik: 'dj0yJnU9Q',
      rdt_cid: '1234.5',
      li_fat_id: '9c1e-2b',
    });
    expect(CLICK_ID.source.replace('{1,500}', '+')).toBe(FBCLID_PATTERN);
  });

  it('writes and reads back each cookie (gclid in Google’s _gcl_aw format, msclkid in UET’s)', () => {
    const now = 1_700_000_000_999;
    expect(ID_COOKIES.gclid.write('Cj0-abc', now)).toBe('GCL.1700000000.Cj0-abc');
    expect(ID_COOKIES.gclid.name).toBe('_gcl_aw');
    expect(ID_COOKIES.msclkid.write('m1', now)).toBe('_uetm1');
    // Where each platform's own tag keeps its click id.
    expect([ID_COOKIES.epik.name, ID_COOKIES.ScCid.name, ID_COOKIES.rdt_cid.name, ID_COOKIES.li_fat_id.name]).toEqual([
      '_epik',
      '_scclid',
      '_rdt_cid',
      'li_fat_id',
    ]);
    for (const [kind, cookie] of Object.entries(ID_COOKIES)) {
      expect(cookie.read(cookie.write(`${kind}-value_1.2`, now))).toBe(`${kind}-value_1.2`);
    }
    expect(ID_COOKIES.gclid.read('garbage')).toBeNull();
  });

  it('remembers a click by its first id; an fbclid as before', () => {
    expect(sentKey({ fbclid: 'F', gclid: 'G' })).toBe('F');
    expect(sentKey({ ttclid: 'T' })).toBe('ttclid:T');
    expect(sentKey({})).toBeNull();
  });
});
