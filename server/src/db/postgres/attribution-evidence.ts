/**
 * Migration 0024 (PostgreSQL): every lookup of a conversion's evidence (db/postgres/evidence.ts)
 * as the branches of one UNION ALL in a function whose plan is generic, as 0021's was (see its
 * comment in db/postgres/migrations.ts: a statement would be planned again for every
 * conversion), now with the §13 lookups: clicks of the conversion's browser (`visitor_id`,
 * `fbp`, `ttp`), of its IPv6 /64 (`ip_network`), of the browsers its buyer's earlier conversions
 * came from, and the ambiguity counts (distinct browsers of a key over the window's days, at most
 * `_count_limit` rows read each, most recent days first).
 *
 * Every click branch is bounded by the candidates' window (`_from`, `_to`): a click outside it is
 * never a candidate, and the generic plan prunes the other months when it runs. Each row is tagged
 * with its lookup; a count row carries only `shared`, a linked browser's row only its ids. An
 * absent value is null: its branch finds nothing. `_exclude_id` is '' when nothing is excluded.
 * Migration 0044 keeps the lookups and rows but runs each branch as a `return query` of its own,
 * only when its value is there (`GUARDED_BRANCHES`).
 */

/** What every click branch returns: the columns of a candidate click. */
const COLUMNS =
  'c.id, c.fbclid, c.store_id, c.livemode, c.click_time, c.is_bot, c.fingerprint, c.derived_fingerprint, c.ip_address, c.user_agent, c.fbp, c.ttp, c.visitor_id, null::integer';
const NO_CLICK =
  'null::text, null::text, null::text, null::integer, null::bigint, null::integer, null::text, null::text, null::text, null::text';

/** The branch of an fbclid: through its key to its click, in its one partition. */
const byKey = (fbclid: string) => `
  select 'fbclid', ${COLUMNS}
    from clicks c
    where c.click_time >= _from and c.click_time <= _to and (c.id, c.click_time) = (
      select k.click_id, k.click_time from click_keys k
      where k.store_id = _store_id and k.livemode = _livemode and k.fbclid = ${fbclid})`;

/** The branch of a value a click carries: the most recent matching clicks of the window (a partial index each, where partial). */
const recent = (lookup: string, column: string, value: string) => `
  (select '${lookup}', ${COLUMNS}
    from clicks c
    where c.store_id = _store_id and c.livemode = _livemode and c.${column} = ${value}
      and c.click_time >= _from and c.click_time <= _to and c.is_bot = 0
    order by c.click_time desc limit _limit)`;

/** Earlier conversions sharing a hashed email or phone: `attributed` is in the index's key, so each value is a range of its own. */
const earlier = (select: string, column: string, value: string, attributed: 0 | 1, limit: string) => `
        (select ${select} from conversions e
          where e.store_id = _store_id and e.livemode = _livemode and e.${column} = ${value}
            and e.event_time >= _after and e.event_time <= _before and e.attributed = ${attributed} and e.id <> _exclude_id
          order by e.event_time desc limit ${limit})`;

/** The distinct browsers of one key over the window's days. */
const count = (lookup: string, key: string) => `
  select '${lookup}', ${NO_CLICK}, null::text, null::text, null::text,
    (select count(distinct a.browser)::integer from (
      select a.browser from attribution_keys a where a.day = any(_days) and a.k = ${key}
      order by a.day desc limit _count_limit) a)
    where ${key} is not null`;

/** The browsers of the buyer's most recent earlier conversions (each value and attributed state its own range). */
const LINKED = ['email_hash', 'phone_hash']
  .flatMap((column) => {
    const value = column === 'email_hash' ? '_email_hash' : '_phone_hash';
    return [1, 0].map((attributed) =>
      earlier('e.visitor_id, e.fbp, e.ttp, e.event_time', column, value, attributed as 0 | 1, '3'),
    );
  })
  .join(' union all ');

const linkedClicks = (column: string) => `
    if linked.${column} is not null then
      return query ${recent('linked_click', column, `linked.${column}`)};
    end if;`;

/**
 * The browsers identify linked to the buyer's hashed email or phone (migration 0026): the most
 * recently seen of each hash, one range of `identity_links_recent` each; '' is an absent id.
 */
const IDENTIFIED = ['email', 'phone']
  .map(
    (kind) => `
        (select nullif(i.visitor_id, '') as visitor_id, nullif(i.fbp, '') as fbp, nullif(i.ttp, '') as ttp, i.seen_at
          from identity_links i
          where i.store_id = _store_id and i.livemode = _livemode and i.kind = '${kind}' and i.hash = _${kind}_hash
          order by i.seen_at desc limit 3)`,
  )
  .join(' union all ');

/** Each linked browser: its ids as a 'linked' row, then its clicks of the window. */
const LINKED_ROWS = `
    return query select 'linked', ${NO_CLICK}, linked.fbp, linked.ttp, linked.visitor_id, null::integer;
    ${linkedClicks('visitor_id')}
    ${linkedClicks('fbp')}
    ${linkedClicks('ttp')}`;

/** 0024's and 0026's lookups: one UNION ALL, every branch started on every call (null values find nothing). */
const UNION_BRANCHES = `  return query
  select 'click', ${COLUMNS}
    from clicks c
    where c.id = _click_id and c.account_id = _account_id and c.livemode = _livemode
      and c.click_time >= _from and c.click_time <= _to
  union all ${byKey('_fbclid1')}
  union all ${byKey('_fbclid2')}
  union all ${recent('browser', 'visitor_id', '_visitor_id')}
  union all ${recent('browser', 'fbp', '_fbp')}
  union all ${recent('browser', 'ttp', '_ttp')}
  union all ${recent('fingerprint', 'fingerprint', '_fingerprint')}
  union all ${recent('derived', 'derived_fingerprint', '_derived1')}
  union all ${recent('derived', 'derived_fingerprint', '_derived2')}
  union all
  select 'identity', ${COLUMNS}
    from clicks c
    where c.store_id = _store_id and c.livemode = _livemode and c.click_time >= _from and c.click_time <= _to
      and c.id in (${earlier('e.attributed_click_id', 'email_hash', '_email_hash', 1, '_limit')}
        union ${earlier('e.attributed_click_id', 'phone_hash', '_phone_hash', 1, '_limit')})
  union all ${recent('ip', 'ip_address', '_ip_address')}
  union all ${recent('ip', 'ip_network', '_ip_network')}
  union all ${count('count_ip', '_k_ip')}
  union all ${count('count_ip_user_agent', '_k_ip_user_agent')}
  union all ${count('count_fingerprint', '_k_fingerprint')};
`;

/**
 * 0044's: each lookup only when its value is there. The UNION ALL started every branch's scans on
 * the window's partitions for every call, ~1.3 ms of a conversion's 1.6 ms of PostgreSQL at 2M
 * clicks though a conversion with an fbclid, IP and user agent uses four of them; guarded, 0.44 ms.
 */
const GUARDED_BRANCHES = `  if _click_id is not null then return query
  select 'click', ${COLUMNS}
    from clicks c
    where c.id = _click_id and c.account_id = _account_id and c.livemode = _livemode
      and c.click_time >= _from and c.click_time <= _to; end if;
  if _fbclid1 is not null then return query ${byKey('_fbclid1')}; end if;
  if _fbclid2 is not null then return query ${byKey('_fbclid2')}; end if;
  if _visitor_id is not null then return query ${recent('browser', 'visitor_id', '_visitor_id')}; end if;
  if _fbp is not null then return query ${recent('browser', 'fbp', '_fbp')}; end if;
  if _ttp is not null then return query ${recent('browser', 'ttp', '_ttp')}; end if;
  if _fingerprint is not null then return query ${recent('fingerprint', 'fingerprint', '_fingerprint')}; end if;
  if _derived1 is not null then return query ${recent('derived', 'derived_fingerprint', '_derived1')}; end if;
  if _derived2 is not null then return query ${recent('derived', 'derived_fingerprint', '_derived2')}; end if;
  if _email_hash is not null or _phone_hash is not null then return query
  select 'identity', ${COLUMNS}
    from clicks c
    where c.store_id = _store_id and c.livemode = _livemode and c.click_time >= _from and c.click_time <= _to
      and c.id in (${earlier('e.attributed_click_id', 'email_hash', '_email_hash', 1, '_limit')}
        union ${earlier('e.attributed_click_id', 'phone_hash', '_phone_hash', 1, '_limit')}); end if;
  if _ip_address is not null then return query ${recent('ip', 'ip_address', '_ip_address')}; end if;
  if _ip_network is not null then return query ${recent('ip', 'ip_network', '_ip_network')}; end if;
  if _k_ip is not null then return query ${count('count_ip', '_k_ip')}; end if;
  if _k_ip_user_agent is not null then return query ${count('count_ip_user_agent', '_k_ip_user_agent')}; end if;
  if _k_fingerprint is not null then return query ${count('count_fingerprint', '_k_fingerprint')}; end if;
`;

/**
 * The function's text: 0024's (`identify` false, kept as it shipped), 0026's, which also walks
 * the browsers identify linked (a budget of its own: identify links do not crowd out the earlier
 * conversions' browsers, nor the reverse), and 0044's (`guarded`: each lookup, and the linked
 * browsers' loops, only when their values are there). Same parameters and rows: each replaces the
 * one before in place.
 */
const evidenceFunction = (identify: boolean, guarded = false) => `
create ${identify ? 'or replace ' : ''}function waytrack_attribution_evidence(
  _click_id text, _account_id text, _store_id text, _livemode integer, _from bigint, _to bigint, _limit integer,
  _fbclid1 text, _fbclid2 text, _fingerprint text, _derived1 text, _derived2 text, _ip_address text, _ip_network text,
  _visitor_id text, _fbp text, _ttp text,
  _email_hash text, _phone_hash text, _after bigint, _before bigint, _exclude_id text,
  _days integer[], _k_ip bigint, _k_ip_user_agent bigint, _k_fingerprint bigint, _count_limit integer)
returns table (lookup text, id text, fbclid text, store_id text, livemode integer, click_time bigint, is_bot integer,
  fingerprint text, derived_fingerprint text, ip_address text, user_agent text, fbp text, ttp text, visitor_id text,
  shared integer)
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $body$
#variable_conflict use_column
declare
  linked record;
begin
${guarded ? GUARDED_BRANCHES : UNION_BRANCHES}  ${guarded ? 'if _email_hash is not null or _phone_hash is not null then' : ''}
  for linked in select l.visitor_id, l.fbp, l.ttp from (${LINKED}) l order by l.event_time desc limit 3 loop${LINKED_ROWS}
  end loop;${
    identify
      ? `
  for linked in select l.visitor_id, l.fbp, l.ttp from (${IDENTIFIED}) l order by l.seen_at desc limit 3 loop${LINKED_ROWS}
  end loop;`
      : ''
  }
  ${guarded ? 'end if;' : ''}
end
$body$`;

export const ATTRIBUTION_EVIDENCE_FUNCTION = evidenceFunction(false);
export const IDENTITY_EVIDENCE_FUNCTION = evidenceFunction(true);
export const GUARDED_EVIDENCE_FUNCTION = evidenceFunction(true, true);
