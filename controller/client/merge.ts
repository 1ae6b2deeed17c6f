/**
 * Client-side three-way merge as `kubectl apply` does it: fields in the last-applied manifest
 * but not in the new one are removed; fields in the new one are set; fields nobody applied
 * (defaults, other writers) are kept. Maps merge recursively; lists are atomic.
 */
type Json = unknown;
const isMap = (v: Json): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);

export function threeWayMerge(last: Json, desired: Json, live: Json): Json {
  if (!isMap(desired) || !isMap(live)) return structuredClone(desired);
  const out: Record<string, Json> = structuredClone(live);
  if (isMap(last)) for (const k of Object.keys(last)) if (!(k in desired)) delete out[k];
  for (const [k, v] of Object.entries(desired)) {
    if (v === null)
      delete out[k]; // explicit null removes, as in a JSON merge patch
    else out[k] = threeWayMerge(isMap(last) ? last[k] : undefined, v, live[k]);
  }
  return out;
}
