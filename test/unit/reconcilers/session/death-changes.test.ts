import { describe, expect, it } from 'vitest';
import { deathChanges } from '../../../../controller/reconcilers/session/death-changes.js';

function source() {
  const handlers: (() => void)[] = [];
  return {
    subscribe: (h: () => void) => void handlers.push(h),
    fire: () => {
      for (const h of handlers) h();
    },
  };
}

describe('deathChanges', () => {
  it('hands on the keys the filter found, not every live session', async () => {
    const deaths = source();
    const got: string[][] = [];
    deathChanges(deaths, async () => ['ns/dead']).subscribe((k) => got.push(k));
    deaths.fire();
    await new Promise((r) => setTimeout(r, 0));
    expect(got).toEqual([['ns/dead']]);
  });

  it('coalesces deaths during a look into one more look', async () => {
    const deaths = source();
    let looks = 0;
    let release!: () => void;
    const changed = () => {
      looks++;
      return new Promise<string[]>((r) => {
        release = () => r([`k${looks}`]);
      });
    };
    const got: string[][] = [];
    deathChanges(deaths, changed).subscribe((k) => got.push(k));
    deaths.fire();
    for (let i = 0; i < 5; i++) deaths.fire(); // five more while the first look runs
    expect(looks).toBe(1);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(looks).toBe(2); // one more look covers all five
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(looks).toBe(2);
    expect(got).toEqual([['k1'], ['k2']]);
    deaths.fire(); // a later death looks again
    expect(looks).toBe(3);
  });
});
