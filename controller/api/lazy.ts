/** Modules only some commands need, loaded on first use so a cold `orchctl get` stays fast. */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);
let yamlModule: typeof Yaml | undefined;

export function yaml(): typeof Yaml {
  yamlModule ??= require('yaml') as typeof Yaml;
  return yamlModule;
}
