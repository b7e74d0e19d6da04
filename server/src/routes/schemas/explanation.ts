import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';
import { Nullable, Timestamp } from '../common.js';
import { ClickInOtherMode, Conversion, EXAMPLE_CONVERSION } from './conversions.js';

/**
 * The schema and example of a conversion with the explanation of its attribution (GET
 * /v1/conversions/:id, POST /v1/conversions/:id/reattribute; api.md §13 "Explanation").
 */

export const SIGNAL = Type.Enum(['explicit', 'same_browser', 'identity', 'ip_user_agent', 'ip_device', 'fingerprint', 'ip'], {
  description:
    'A kind of attribution evidence (api.md §13), strongest first: explicit (the conversion names the click), same_browser (its visitorId, fbp or ttp), identity (a browser its hashed email or phone was seen with), ip_user_agent, ip_device (the same network and device platform, another browser), fingerprint, ip (IPv6: the /64)',
});

/** A candidate as it was scored when the conversion was attributed (api.md §13 "Explanation"). */
const ScoredCandidate = Type.Object({
  clickId: Type.String(),
  fbclid: Type.String(),
  clickTime: Timestamp('Click time'),
  confidence: Type.Integer({
    minimum: 0,
    maximum: 100,
    description: 'The estimated probability, in percent, that this is the buyer’s own most recent ad click in the window',
  }),
  evidence: Type.Array(
    Type.Object({
      kind: SIGNAL,
      sharedBy: Type.Integer({
        minimum: 1,
        description: 'Distinct browsers with a click in the window that share this piece of evidence (this one included)',
      }),
    }),
    { description: 'Every piece of evidence linking the click to the conversion, strongest first' },
  ),
});

export const ExplainedConversion = Type.Object({
  ...Conversion.properties,
  attribution: Type.Object(
    {
      signal: Nullable(SIGNAL),
      score: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
      touchpoints: Type.Array(
        Type.Object({
          clickId: Type.String(),
          fbclid: Type.String(),
          signal: SIGNAL,
          score: Type.Integer({ minimum: 0, maximum: 100 }),
          clickTime: Timestamp('Click time'),
        }),
        {
          description:
            'The winner and the buyer’s other clicks in the window known by the same browser (its touchpoints for the multi-touch models), strongest first',
        },
      ),
      candidates: Type.Array(ScoredCandidate, {
        description:
          'The candidates as they were scored when the conversion was last attributed: the winner (or the best, when none reached minConfidence) and up to 4 runners-up, one per browser. Empty for a conversion recorded before scores were kept.',
      }),
      reason: Type.Optional(
        Type.Union(
          [Type.Literal('no_candidates'), Type.Literal('below_min_confidence'), Type.Literal('reattribution_available')],
          {
            description: 'Only when not attributed: why, with the clicks known now and the store settings now',
          },
        ),
      ),
      message: Type.Optional(Type.String({ description: 'Only when not attributed: the reason in a sentence' })),
      minConfidence: Type.Optional(Type.Integer({ description: 'Only when not attributed: the store threshold applied' })),
      bestCandidate: Type.Optional(
        Type.Object(
          {
            clickId: Type.String(),
            fbclid: Type.String(),
            signal: SIGNAL,
            score: Type.Integer({ minimum: 0, maximum: 100 }),
            clickTime: Timestamp('Click time'),
          },
          { description: 'Only when not attributed: the strongest candidate click, whatever its score' },
        ),
      ),
      clickInOtherMode: Type.Optional(ClickInOtherMode),
    },
    {
      description:
        'Why the conversion was (or was not) attributed: the winning signal and score, its touchpoints, and every candidate’s evidence and estimate',
    },
  ),
});

export const EXAMPLE_EXPLAINED = {
  ...EXAMPLE_CONVERSION,
  attribution: {
    signal: 'explicit',
    score: 100,
    touchpoints: [
      { clickId: EXAMPLE.clickId, fbclid: EXAMPLE.fbclid, signal: 'explicit', score: 100, clickTime: EXAMPLE.clickTime },
      {
        clickId: EXAMPLE.earlierClickId,
        fbclid: EXAMPLE.earlierFbclid,
        signal: 'same_browser',
        score: 100,
        clickTime: '2026-11-20T18:02:55.120Z',
      },
    ],
    candidates: [
      {
        clickId: EXAMPLE.clickId,
        fbclid: EXAMPLE.fbclid,
        clickTime: EXAMPLE.clickTime,
        confidence: 100,
        evidence: [
          { kind: 'explicit', sharedBy: 1 },
          { kind: 'same_browser', sharedBy: 1 },
          { kind: 'ip_user_agent', sharedBy: 1 },
          { kind: 'fingerprint', sharedBy: 3 },
          { kind: 'ip', sharedBy: 2 },
        ],
      },
      {
        clickId: 'clk_01kaq3vz7m2x8fbn4p6r9t0wcd',
        fbclid: 'IwAR3x9Qb2LmVt7',
        clickTime: '2026-11-21T20:14:09.553Z',
        confidence: 0,
        evidence: [
          { kind: 'fingerprint', sharedBy: 3 },
          { kind: 'ip', sharedBy: 2 },
        ],
      },
    ],
  },
};
