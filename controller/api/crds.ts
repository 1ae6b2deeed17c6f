/**
 * The CRDs in crds/ are the one source of truth for kinds: names, scope, printer columns and
 * schemas. This module reads a kind from its CRD and resolves the names people type (`sessions`,
 * `as`, ...); config/crds.ts loads the files.
 */
import { closest } from './suggest.js';
import { ApiError } from './errors.js';
import { API_VERSION, GROUP, VERSION } from './types.js';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
  description?: string;
  format?: string;
}

/** An OpenAPI v3 schema node as a CRD carries it: the keywords read here typed, the others kept as they are. */
export interface OpenApiSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  additionalProperties?: boolean | OpenApiSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  format?: string;
  nullable?: boolean;
  anyOf?: OpenApiSchema[];
  allOf?: OpenApiSchema[];
  oneOf?: OpenApiSchema[];
  not?: OpenApiSchema;
  [keyword: string]: unknown;
}

/** A CustomResourceDefinition document from crds/ (the fields this module reads). */
interface CrdVersion {
  name: string;
  schema?: { openAPIV3Schema?: OpenApiSchema };
  subresources?: { status?: object };
  additionalPrinterColumns?: PrinterColumn[];
}
export interface CrdDocument {
  kind?: string;
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: {
    group?: string;
    scope?: string;
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions?: CrdVersion[];
  };
}

export interface KindInfo {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  hasStatus: boolean;
  /** kubectl omits NAME for some kinds (events); our CRDs opt in by annotation. */
  hideNameColumn: boolean;
  columns: PrinterColumn[];
  schema: OpenApiSchema;
  crd: CrdDocument;
}

export interface Registry {
  kinds: KindInfo[];
  byKind: Map<string, KindInfo>;
  resolve(name: string): KindInfo;
  tryResolve(name: string): KindInfo | undefined;
}

export function kindInfoFromCrd(crd: CrdDocument, file: string): KindInfo {
  const spec = crd?.spec;
  const version = spec?.versions?.find((v) => v.name === VERSION);
  const schema = version?.schema?.openAPIV3Schema;
  if (crd?.kind !== 'CustomResourceDefinition' || spec?.group !== GROUP || !schema)
    throw new Error(`${file}: not a ${GROUP} CustomResourceDefinition with version ${VERSION}`);
  const n = spec.names;
  return {
    kind: n.kind,
    listKind: n.listKind ?? `${n.kind}List`,
    plural: n.plural,
    singular: n.singular ?? n.kind.toLowerCase(),
    shortNames: n.shortNames ?? [],
    categories: n.categories ?? [],
    namespaced: spec.scope !== 'Cluster',
    hasStatus: !!version.subresources?.status,
    hideNameColumn: crd.metadata?.annotations?.['orchctl.io/hide-name-column'] === 'true',
    columns: version.additionalPrinterColumns ?? [],
    schema,
    crd,
  };
}

export function makeRegistry(kinds: KindInfo[]): Registry {
  const byKind = new Map(kinds.map((k) => [k.kind, k]));
  const names = new Map<string, KindInfo>();
  for (const k of kinds) {
    for (const n of [k.kind, k.plural, k.singular, ...k.shortNames]) {
      names.set(n.toLowerCase(), k);
      names.set(`${n.toLowerCase()}.${GROUP}`, k);
    }
  }
  const tryResolve = (name: string) => names.get(name.toLowerCase());
  return {
    kinds,
    byKind,
    tryResolve,
    resolve(name: string) {
      const k = tryResolve(name);
      if (!k) {
        const all = kinds.flatMap((x) => [x.plural, x.singular, ...x.shortNames]);
        const guess = closest(name, all);
        const hint = guess ? `; did you mean "${names.get(guess)!.plural}"?` : '';
        throw new ApiError(
          'NotFound',
          `unknown resource type "${name}"${hint} (known: ${kinds.map((x) => x.plural).join(', ')})`,
        );
      }
      return k;
    },
  };
}

export const apiVersionOk = (v: unknown) => v === API_VERSION;
