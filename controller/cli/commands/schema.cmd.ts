import type { Command } from 'commander';

/** Registers `orchctl schema` (flags, help); schema.ts loads only when it runs. */
export function register(program: Command): void {
  program
    .command('schema')
    .description('Write JSON Schemas for editors (yaml-language-server), generated from crds/')
    .argument('[kind]', 'print the schema of one kind instead')
    .option('-d, --output-dir <dir>', 'directory to write to', 'schemas')
    .action(async (kind, opts) => (await import('./schema.js')).schemaCommand(kind, opts));
}
