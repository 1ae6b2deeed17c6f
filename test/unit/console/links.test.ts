/** What a signed action link may do to a Decision, on data: one write with the answer and the use, or why not. */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../controller/api/autopilot.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { answerByLink, LINK_USED_ANNOTATION, linkRefusal } from '../../../controller/console/links.js';
import type { LinkClaims } from '../../../controller/notify/action-links.js';

const AT = '2026-11-27T02:00:00.000Z';
const claims: LinkClaims = { namespace: 'default', name: 'd1', action: 'approve', rv: '7', exp: 0, nonce: 'n1' };
const dec = (over: Partial<Decision> = {}, phase = 'PendingApproval'): Decision =>
  ({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name: 'd1', namespace: 'default', resourceVersion: '7' },
    spec: { action: 'stop', target: { project: 'p', session: 's' }, reason: 'idle' },
    status: { phase },
    ...over,
  }) as Decision;

describe('answering a decision by link', () => {
  it('writes the approval by link:<channel> and the link nonce in one change', () => {
    const c = answerByLink(dec(), claims, 'link:ops', AT, 'ok by me');
    expect(c).toMatchObject({
      write: {
        spec: { approval: { verdict: 'Approved', by: 'link:ops', at: AT, message: 'ok by me' } },
        metadata: { annotations: { [LINK_USED_ANNOTATION]: `n1 ${AT}` } },
      },
    });
  });

  it('rejects with a reject link', () => {
    const c = answerByLink(dec(), { ...claims, action: 'reject' }, 'link:ops', AT);
    expect(c).toMatchObject({ write: { spec: { approval: { verdict: 'Rejected' } } } });
  });

  it('refuses a second use of the same link', () => {
    const used = dec({
      metadata: { name: 'd1', resourceVersion: '8', annotations: { [LINK_USED_ANNOTATION]: `n1 ${AT}` } },
      spec: { action: 'stop', target: {}, reason: 'r', approval: { verdict: 'Approved', at: AT, by: 'link:ops' } },
    } as unknown as Partial<Decision>);
    expect(answerByLink(used, claims, 'link:ops', AT)).toEqual({ refuse: `this link was used already (${AT})` });
  });

  it('refuses a decision answered some other way, or no longer pending, or changed since the link was minted', () => {
    const answered = dec({
      spec: { action: 'stop', target: {}, reason: 'r', approval: { verdict: 'Rejected', at: AT, by: 'admin' } },
    } as unknown as Partial<Decision>);
    expect(linkRefusal(answered, claims)).toBe('decision "d1" was already rejected by admin');
    expect(linkRefusal(dec({}, 'Expired'), claims)).toBe('decision "d1" is Expired: it no longer waits for an answer');
    expect(linkRefusal(dec({ metadata: { name: 'd1', resourceVersion: '9' } }), claims)).toContain(
      'changed since this link was sent',
    );
    expect(linkRefusal(undefined, claims)).toBe('decision "d1" no longer exists');
    expect(linkRefusal(dec(), claims)).toBeUndefined();
  });
});
