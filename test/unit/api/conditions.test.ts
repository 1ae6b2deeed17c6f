/** setCondition follows apimachinery meta.SetStatusCondition: lastTransitionTime moves only when status flips. */
import { describe, expect, it } from 'vitest';
import { getCondition, isTrue, removeCondition, setCondition } from '../../../controller/api/conditions.js';
import type { Condition } from '../../../controller/api/types.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:05:00Z';
const T2 = '2025-01-01T00:10:00Z';

describe('setCondition', () => {
  it('adds a new condition with lastTransitionTime = now and an empty message by default', () => {
    const list: Condition[] = [];
    expect(setCondition(list, { type: 'Ready', status: 'False', reason: 'Starting' }, T0)).toBe(true);
    expect(list).toEqual([{ type: 'Ready', status: 'False', reason: 'Starting', message: '', lastTransitionTime: T0 }]);
  });

  it('keeps lastTransitionTime when only reason, message or observedGeneration change', () => {
    const list: Condition[] = [];
    setCondition(list, { type: 'Ready', status: 'False', reason: 'Starting', observedGeneration: 1 }, T0);
    expect(
      setCondition(
        list,
        { type: 'Ready', status: 'False', reason: 'WaitingForPrompt', message: 'pasting', observedGeneration: 2 },
        T1,
      ),
    ).toBe(true);
    expect(list[0]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForPrompt',
      message: 'pasting',
      lastTransitionTime: T0,
      observedGeneration: 2,
    });
  });

  it('moves lastTransitionTime when status flips', () => {
    const list: Condition[] = [];
    setCondition(list, { type: 'Ready', status: 'False', reason: 'Starting' }, T0);
    expect(setCondition(list, { type: 'Ready', status: 'True', reason: 'Running' }, T1)).toBe(true);
    expect(list[0].lastTransitionTime).toBe(T1);
    expect(list[0].status).toBe('True');
    setCondition(list, { type: 'Ready', status: 'Unknown', reason: 'Lost' }, T2);
    expect(list[0].lastTransitionTime).toBe(T2);
  });

  it('reports no change (and changes nothing) when the condition is already as given', () => {
    const list: Condition[] = [];
    setCondition(list, { type: 'Ready', status: 'True', reason: 'Running', message: 'ok', observedGeneration: 3 }, T0);
    const before = structuredClone(list);
    expect(
      setCondition(
        list,
        { type: 'Ready', status: 'True', reason: 'Running', message: 'ok', observedGeneration: 3 },
        T1,
      ),
    ).toBe(false);
    // No observedGeneration given: kept.
    expect(setCondition(list, { type: 'Ready', status: 'True', reason: 'Running', message: 'ok' }, T2)).toBe(false);
    expect(list).toEqual(before);
  });

  it('touches only the condition of the given type', () => {
    const list: Condition[] = [];
    setCondition(list, { type: 'Ready', status: 'True', reason: 'Running' }, T0);
    setCondition(list, { type: 'Stalled', status: 'False', reason: 'Progressing' }, T0);
    setCondition(list, { type: 'Stalled', status: 'True', reason: 'NoProgress' }, T1);
    expect(getCondition(list, 'Ready')).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Running',
      message: '',
      lastTransitionTime: T0,
    });
    expect(getCondition(list, 'Stalled')!.lastTransitionTime).toBe(T1);
    expect(list.map((c) => c.type)).toEqual(['Ready', 'Stalled']);
  });
});

describe('condition helpers', () => {
  it('getCondition, isTrue and removeCondition', () => {
    const list: Condition[] = [];
    setCondition(list, { type: 'Ready', status: 'True', reason: 'Running' }, T0);
    setCondition(list, { type: 'Stalled', status: 'False', reason: 'Fine' }, T0);
    expect(isTrue(list, 'Ready')).toBe(true);
    expect(isTrue(list, 'Stalled')).toBe(false);
    expect(isTrue(list, 'Missing')).toBe(false);
    expect(isTrue(undefined, 'Ready')).toBe(false);
    expect(getCondition(undefined, 'Ready')).toBeUndefined();
    expect(removeCondition(list, 'Ready')).toBe(true);
    expect(removeCondition(list, 'Ready')).toBe(false);
    expect(list.map((c) => c.type)).toEqual(['Stalled']);
  });
});
