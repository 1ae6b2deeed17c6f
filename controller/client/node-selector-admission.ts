/**
 * A nodeSelector (AgentSession and Project spec.nodeSelector) as Kubernetes checks one: label keys
 * are qualified names and values label values. The CRD bounds the values; a key's shape (a DNS
 * prefix, a 63-character name) is more than a schema says.
 */
import { checkLabelValue, checkQualifiedName } from '../api/names.js';
import type { FieldError, PathPart } from '../api/validate.js';

export function nodeSelectorErrors(selector: unknown, at: PathPart[]): FieldError[] {
  if (!selector || typeof selector !== 'object' || Array.isArray(selector)) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(selector)) {
    const ke = checkQualifiedName(k);
    if (ke) errs.push({ path: [...at, k], message: `Invalid key "${k}": ${ke}`, atKey: true });
    const ve = typeof v === 'string' ? checkLabelValue(v) : undefined;
    if (ve) errs.push({ path: [...at, k], message: `Invalid value "${v}": ${ve}` });
  }
  return errs;
}
