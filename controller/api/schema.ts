/**
 * Translates a CRD's structural openAPIV3Schema into JSON Schema (draft-07), for ajv at run
 * time and for editors (yaml-language-server modelines). Kubernetes-specific parts become:
 *  - x-kubernetes-int-or-string      → anyOf integer | string
 *  - x-kubernetes-preserve-unknown-fields → additionalProperties allowed
 *  - objects with `properties`       → additionalProperties: false (strict unknown-field checks)
 *  - format: duration                → Go duration ("45m"), not ISO 8601 (custom format `go-duration`)
 *  - nullable                        → type [T, "null"]
 *  - x-kubernetes-list-type: set     → uniqueItems
 *  - x-kubernetes-list-type: map     → kept; ajv checks it with a custom keyword
 * The object envelope (apiVersion/kind consts, ObjectMeta) is injected as Kubernetes does.
 */
import type { KindInfo, OpenApiSchema } from './crds.js';
import { API_VERSION } from './types.js';

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** Kinds whose names become tmux targets and directory names: no dots allowed. */
export const LABEL_NAMED_KINDS = new Set(['AgentSession']);

export function objectMetaSchema(kind: KindInfo): OpenApiSchema {
  const label = LABEL_NAMED_KINDS.has(kind.kind);
  return {
    type: 'object',
    description:
      'Standard object metadata: name, namespace, labels and annotations are set by you; the rest by the system.',
    required: ['name'],
    properties: {
      name: {
        type: 'string',
        description: label
          ? 'Name of the object: a DNS-1123 label (lowercase letters, digits, "-"; at most 63 characters).'
          : 'Name of the object: a DNS-1123 subdomain ' +
            '(lowercase letters, digits, "-" and "."; at most 253 characters).',
        maxLength: label ? 63 : 253,
        pattern: label ? DNS_LABEL : DNS_SUBDOMAIN,
      },
      ...(kind.namespaced
        ? {
            namespace: {
              type: 'string',
              description: 'Namespace of the object (default: "default").',
              maxLength: 63,
              pattern: DNS_LABEL,
            },
          }
        : {}),
      labels: {
        type: 'object',
        description: 'Labels for selection (SessionPolicy selectors, `-l`).',
        additionalProperties: { type: 'string' },
      },
      annotations: {
        type: 'object',
        description: 'Free-form annotations for tools.',
        additionalProperties: { type: 'string' },
      },
      // System-managed fields are accepted (so `get -o yaml | apply -f -` round-trips) and ignored.
      uid: { type: 'string', description: 'Set by the system.' },
      generation: { type: 'integer', description: 'Set by the system.' },
      resourceVersion: { type: 'string', description: 'Set by the system; used for optimistic concurrency.' },
      creationTimestamp: { type: 'string', description: 'Set by the system.' },
      deletionTimestamp: { type: 'string', description: 'Set by the system.' },
      finalizers: {
        type: 'array',
        items: { type: 'string' },
        description: 'Finalizers that must be removed before the object is deleted.',
      },
      ownerReferences: {
        type: 'array',
        description: 'Objects this one belongs to; it is deleted with them.',
        items: {
          type: 'object',
          required: ['apiVersion', 'kind', 'name', 'uid'],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            name: { type: 'string' },
            uid: { type: 'string' },
            controller: { type: 'boolean' },
            blockOwnerDeletion: { type: 'boolean' },
          },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  };
}

function translate(node: OpenApiSchema): OpenApiSchema {
  if (!node || typeof node !== 'object') return node;
  const out: OpenApiSchema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties')
      out.properties = Object.fromEntries(Object.entries(node.properties ?? {}).map(([p, s]) => [p, translate(s)]));
    else if (k === 'items' && node.items) out.items = translate(node.items);
    else if (k === 'additionalProperties' && typeof node.additionalProperties === 'object')
      out.additionalProperties = translate(node.additionalProperties);
    else if (k === 'anyOf' || k === 'allOf' || k === 'oneOf') out[k] = (node[k] ?? []).map(translate);
    else if (k === 'not' && node.not) out.not = translate(node.not);
    else if (k === 'format' && v === 'duration') out.format = 'go-duration';
    else if (k === 'format' && v === 'int-or-string') continue;
    else if (k === 'nullable') continue;
    else out[k] = v;
  }
  if (node['x-kubernetes-int-or-string'] || node.format === 'int-or-string') {
    delete out.type;
    if (!out.anyOf) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node.nullable && typeof out.type === 'string') out.type = [out.type, 'null'];
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (node['x-kubernetes-preserve-unknown-fields']) {
    if (out.additionalProperties === undefined) out.additionalProperties = true;
  } else if (out.properties && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

/**
 * JSON Schema of a whole manifest of `kind`. `status` is allowed (it is ignored on apply) so
 * that objects read back with `get -o yaml` validate too.
 */
export function manifestSchema(kind: KindInfo): OpenApiSchema {
  const root = translate(kind.schema);
  const properties: Record<string, OpenApiSchema> = {
    ...(root.properties ?? {}),
    apiVersion: { type: 'string', const: API_VERSION, description: `Always "${API_VERSION}".` },
    kind: { type: 'string', const: kind.kind, description: `Always "${kind.kind}".` },
    metadata: objectMetaSchema(kind),
  };
  return {
    ...root,
    type: 'object',
    description: root.description,
    required: [...new Set(['apiVersion', 'kind', 'metadata', ...(root.required ?? [])])],
    properties,
    additionalProperties: false,
  };
}

/** Editor schema for one kind, with draft-07 marker and an id (`<kind>_v1alpha1.json`). */
export function editorSchema(kind: KindInfo): OpenApiSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `${kind.kind.toLowerCase()}_v1alpha1.json`,
    title: `${kind.kind} (${API_VERSION})`,
    ...manifestSchema(kind),
  };
}

/** Umbrella schema that dispatches on `kind`, for files mixing several kinds. */
export function umbrellaSchema(kinds: KindInfo[]): OpenApiSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'all.json',
    title: `orchctl manifests (${API_VERSION})`,
    type: 'object',
    required: ['apiVersion', 'kind'],
    properties: { kind: { enum: kinds.map((k) => k.kind) }, apiVersion: { const: API_VERSION } },
    allOf: kinds.map((k) => ({
      if: { properties: { kind: { const: k.kind } }, required: ['kind'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable.
      then: { $ref: `${k.kind.toLowerCase()}_v1alpha1.json` },
    })),
  };
}
