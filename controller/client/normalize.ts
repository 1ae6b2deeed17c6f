/**
 * Turning a validated manifest into the object that is stored: default namespace, relative
 * paths resolved against the manifest's directory, schema defaults, no status.
 */
import path from 'node:path';
import type { KindInfo } from '../api/crds.js';
import { DEFAULT_NAMESPACE, LAST_APPLIED_ANNOTATION, type Resource } from '../api/types.js';

/** Spec fields holding paths, resolved at apply time so the controller never guesses a base. */
const PATH_FIELDS: Record<string, string[][]> = {
  Project: [['path']],
  Agent: [['systemPromptFile']],
  AgentSession: [['workdir'], ['promptFile'], ['agent', 'systemPromptFile']],
};

export function resolvePaths(obj: Resource, baseDir: string): void {
  // A Pipeline's phase templates are AgentSession specs: their paths too.
  if (obj.kind === 'Pipeline' && Array.isArray(obj.spec?.phases))
    for (const ph of obj.spec.phases as { template?: Resource['spec'] }[])
      resolvePaths({ ...obj, kind: 'AgentSession', spec: ph?.template }, baseDir);
  for (const fieldPath of PATH_FIELDS[obj.kind] ?? []) {
    let parent: Record<string, unknown> | undefined = obj.spec;
    for (const p of fieldPath.slice(0, -1)) {
      const next: unknown = parent?.[p];
      parent = next !== null && typeof next === 'object' ? (next as Record<string, unknown>) : undefined;
    }
    const leaf = fieldPath[fieldPath.length - 1];
    const v = parent?.[leaf];
    if (parent && typeof v === 'string' && v !== '') {
      parent[leaf] = path.resolve(baseDir, v.startsWith('~/') ? path.join(process.env.HOME ?? '', v.slice(2)) : v);
    }
  }
}

/** Prepares a manifest for validation and storage (before schema defaults are applied). */
export function normalizeManifest(raw: Resource, kind: KindInfo, baseDir: string, namespace?: string): Resource {
  const obj = structuredClone(raw);
  delete obj.status;
  obj.metadata = { ...(obj.metadata ?? ({} as Resource['metadata'])) };
  if (kind.namespaced) obj.metadata.namespace = obj.metadata.namespace ?? namespace ?? DEFAULT_NAMESPACE;
  if (obj.metadata.annotations) {
    delete obj.metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(obj.metadata.annotations).length === 0) delete obj.metadata.annotations;
  }
  // System-managed metadata from a round-tripped `get -o yaml` is not the user's desired state.
  for (const f of ['uid', 'generation', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const)
    delete obj.metadata[f];
  resolvePaths(obj, baseDir);
  return obj;
}
