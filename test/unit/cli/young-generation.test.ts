/** Which `orchctl` calls are the long-running ones whose young generation stays small (cli/young-generation.ts). */
import { expect, it } from 'vitest';
import { commandOf } from '../../../controller/cli/young-generation.js';

it('names the command past the global options and their values', () => {
  expect(commandOf(['controller', '--workers', '4'])).toBe('controller');
  expect(commandOf(['--home', '/tmp/node', 'get', 'sessions'])).toBe('get');
  expect(commandOf(['--context', 'node', '--home=/x', 'node', '--name', 'a'])).toBe('node');
  expect(commandOf(['--version'])).toBeUndefined();
});
