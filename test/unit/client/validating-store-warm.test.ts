/**
 * ValidatingStore.warm compiles every kind's schema before the first write: without it a controller's
 * first write of each kind compiled one (~0.3 s for the first session, the tail of apply→Running in
 * the controller benchmark). Its own file: the compiled schemas are per module instance.
 */
import { describe, expect, it } from 'vitest';
import { compiledKinds } from '../../../controller/api/validate.js';
import { ValidatingStore } from '../../../controller/client/validating-store.js';
import { registry } from '../../../controller/config/crds.js';
import type { Store } from '../../../controller/store/store.js';

describe('ValidatingStore.warm', () => {
  it('compiles the schema of every kind with a spec, and of no other', async () => {
    expect(compiledKinds()).toEqual([]);
    // warm reads nothing from the store it wraps.
    await new ValidatingStore({} as Store).warm();
    const withSpec = [...registry().byKind.values()].filter((k) => k.schema.properties?.spec).map((k) => k.kind);
    expect(withSpec.length).toBeGreaterThan(10);
    expect(compiledKinds().sort()).toEqual(withSpec.sort());
    expect(compiledKinds()).not.toContain('Event');
  });
});
