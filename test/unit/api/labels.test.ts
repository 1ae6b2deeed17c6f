/** Label selectors as kubectl parses and matches them (apimachinery pkg/labels). */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../controller/api/errors.js';
import { fromLabelSelector, matches, parseSelector } from '../../../controller/api/labels.js';

describe('parseSelector', () => {
  it('parses every operator', () => {
    expect(parseSelector('team=web')).toEqual([{ key: 'team', op: 'in', values: ['web'] }]);
    expect(parseSelector('team==web')).toEqual([{ key: 'team', op: 'in', values: ['web'] }]);
    expect(parseSelector('team!=web')).toEqual([{ key: 'team', op: 'notin', values: ['web'] }]);
    expect(parseSelector('env in (prod, staging)')).toEqual([{ key: 'env', op: 'in', values: ['prod', 'staging'] }]);
    expect(parseSelector('env notin (dev)')).toEqual([{ key: 'env', op: 'notin', values: ['dev'] }]);
    expect(parseSelector('gpu')).toEqual([{ key: 'gpu', op: 'exists' }]);
    expect(parseSelector('!gpu')).toEqual([{ key: 'gpu', op: '!exists' }]);
    expect(parseSelector('app.kubernetes.io/name=orchctl')).toEqual([
      { key: 'app.kubernetes.io/name', op: 'in', values: ['orchctl'] },
    ]);
    expect(parseSelector('tier=')).toEqual([{ key: 'tier', op: 'in', values: [''] }]);
  });

  it('ANDs comma-separated requirements, with commas inside parentheses kept together', () => {
    expect(parseSelector(' team = web , env in (a,b),!gpu ')).toEqual([
      { key: 'team', op: 'in', values: ['web'] },
      { key: 'env', op: 'in', values: ['a', 'b'] },
      { key: 'gpu', op: '!exists' },
    ]);
  });

  it('is empty (matches everything) for an empty or blank selector', () => {
    expect(parseSelector(undefined)).toEqual([]);
    expect(parseSelector('')).toEqual([]);
    expect(parseSelector('   ')).toEqual([]);
  });

  it.each([
    ['a b c', 'unable to parse requirement: "a b c" in label selector "a b c"'],
    ['team=web=x', 'unable to parse requirement: "team=web=x" in label selector "team=web=x"'],
    ['env in prod', 'unable to parse requirement: "env in prod" in label selector "env in prod"'],
    [
      '-bad=x',
      `invalid label key "-bad" in "-bad=x": name part must be 63 characters or less, ` +
        "alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character",
    ],
    [
      'team=-web',
      'invalid label value "-web" in "team=-web": ' +
        "must be empty or alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character",
    ],
    [
      `k=${'v'.repeat(64)}`,
      `invalid label value "${'v'.repeat(64)}" in "k=${'v'.repeat(64)}": must be no more than 63 characters`,
    ],
  ])('rejects %j with a BadRequest', (sel, message) => {
    let err: unknown;
    try {
      parseSelector(sel);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).reason).toBe('BadRequest');
    expect((err as ApiError).message).toBe(message);
  });
});

describe('matches', () => {
  const web = { team: 'web', env: 'prod' };
  const m = (sel: string, labels: Record<string, string> | undefined) => matches(parseSelector(sel), labels);

  it('equality and inequality (!= also matches objects without the key, as in Kubernetes)', () => {
    expect(m('team=web', web)).toBe(true);
    expect(m('team=api', web)).toBe(false);
    expect(m('team=web', undefined)).toBe(false);
    expect(m('team!=api', web)).toBe(true);
    expect(m('team!=web', web)).toBe(false);
    expect(m('team!=web', {})).toBe(true);
  });

  it('set membership', () => {
    expect(m('env in (prod,staging)', web)).toBe(true);
    expect(m('env in (dev)', web)).toBe(false);
    expect(m('env in (prod)', {})).toBe(false);
    expect(m('env notin (dev)', web)).toBe(true);
    expect(m('env notin (prod)', web)).toBe(false);
    expect(m('env notin (prod)', {})).toBe(true);
  });

  it('existence', () => {
    expect(m('team', web)).toBe(true);
    expect(m('gpu', web)).toBe(false);
    expect(m('!gpu', web)).toBe(true);
    expect(m('!team', web)).toBe(false);
    expect(m('tier=', { tier: '' })).toBe(true);
    expect(m('tier', { tier: '' })).toBe(true);
  });

  it('all requirements must hold', () => {
    expect(m('team=web,env=prod', web)).toBe(true);
    expect(m('team=web,env=dev', web)).toBe(false);
    expect(m('', web)).toBe(true);
    expect(m('', undefined)).toBe(true);
  });

  it('does not match keys inherited from Object.prototype', () => {
    expect(m('constructor', {})).toBe(false);
    expect(m('toString', { a: 'b' })).toBe(false);
  });
});

describe('fromLabelSelector (metav1.LabelSelector, e.g. SessionPolicy.spec.selector)', () => {
  it('translates matchLabels and matchExpressions', () => {
    const sel = fromLabelSelector({
      matchLabels: { team: 'web' },
      matchExpressions: [
        { key: 'priority', operator: 'In', values: ['high', 'urgent'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'experimental', operator: 'DoesNotExist' },
      ],
    });
    expect(matches(sel, { team: 'web', priority: 'high', owner: 'me' })).toBe(true);
    expect(matches(sel, { team: 'web', priority: 'low', owner: 'me' })).toBe(false);
    expect(matches(sel, { team: 'web', priority: 'high', owner: 'me', env: 'dev' })).toBe(false);
    expect(matches(sel, { team: 'web', priority: 'high' })).toBe(false);
    expect(matches(sel, { team: 'web', priority: 'high', owner: 'me', experimental: 'yes' })).toBe(false);
    expect(matches(sel, { team: 'api', priority: 'high', owner: 'me' })).toBe(false);
  });

  it('an absent or empty selector matches everything', () => {
    expect(matches(fromLabelSelector(undefined), { a: 'b' })).toBe(true);
    expect(matches(fromLabelSelector({}), undefined)).toBe(true);
  });
});
