/** Condition helpers ported from apimachinery meta.SetStatusCondition semantics. */
import type { Condition } from './types.js';

export interface ConditionInput {
  type: string;
  status: Condition['status'];
  reason: string;
  message?: string;
  observedGeneration?: number;
}

/**
 * Sets a condition in place. lastTransitionTime changes only when `status` flips; reason,
 * message and observedGeneration are always updated. Returns true when anything changed.
 */
export function setCondition(list: Condition[], c: ConditionInput, now = new Date().toISOString()): boolean {
  const existing = list.find((x) => x.type === c.type);
  const message = c.message ?? '';
  if (!existing) {
    list.push({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message,
      lastTransitionTime: now,
      ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}),
    });
    return true;
  }
  let changed = false;
  if (existing.status !== c.status) {
    existing.status = c.status;
    existing.lastTransitionTime = now;
    changed = true;
  }
  if (existing.reason !== c.reason) {
    existing.reason = c.reason;
    changed = true;
  }
  if (existing.message !== message) {
    existing.message = message;
    changed = true;
  }
  if (c.observedGeneration !== undefined && existing.observedGeneration !== c.observedGeneration) {
    existing.observedGeneration = c.observedGeneration;
    changed = true;
  }
  return changed;
}

export function getCondition(list: Condition[] | undefined, type: string): Condition | undefined {
  return list?.find((c) => c.type === type);
}

export function isTrue(list: Condition[] | undefined, type: string): boolean {
  return getCondition(list, type)?.status === 'True';
}

export function removeCondition(list: Condition[], type: string): boolean {
  const i = list.findIndex((c) => c.type === type);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}
