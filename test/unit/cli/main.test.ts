import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../controller/cli/main.js';

const commandNames = async (args: string[]) => (await buildProgram(args)).commands.map((c) => c.name());

describe('buildProgram', () => {
  it('registers only the command the arguments invoke, after the global options', async () => {
    expect(await commandNames(['get', 'sessions'])).toEqual(['get']);
    expect(await commandNames(['--home', '/h', '--context=c', 'attach', 's'])).toEqual(['logs', 'attach']);
  });

  it('registers every command, in help order, for help, an unknown word and completion', async () => {
    const all = await commandNames([]);
    expect(all.slice(0, 4)).toEqual(['apply', 'get', 'describe', 'delete']);
    expect(all).toContain('__complete');
    for (const args of [['-h', 'get'], ['help', 'get'], ['ge'], ['__complete', 'ge'], ['--home', '/h']]) {
      expect(await commandNames(args)).toEqual(all);
    }
  });
});
