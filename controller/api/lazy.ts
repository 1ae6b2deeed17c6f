/** Modules only some commands need, loaded on first use so a cold `orchctl get` stays fast. */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let yamlModule: typeof import('yaml') | undefined;

export function yaml(): typeof import('yaml') {
  return (yamlModule ??= require('yaml') as typeof import('yaml'));
}
