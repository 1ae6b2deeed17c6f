import type { Command } from 'commander';
import { globals } from '../register.js';

/** Registers `orchctl completion` and the hidden `__complete`; completion.ts loads only when one runs. */
export function register(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script: source <(orchctl completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action(async (shell) => (await import('./completion.js')).completionCommand(shell));

  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .action(async (words: string[], _opts, cmd) => {
      const { completeWords } = await import('./completion.js');
      process.stdout.write((await completeWords(program, words, globals(cmd))).join('\n') + '\n');
    });
}
