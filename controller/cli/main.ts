/**
 * orchctl: the kubectl-shaped command line. Each command registers its flags in commands/<name>.cmd.ts
 * (like kubectl's NewCmd…); its implementation module is loaded only when it runs,
 * so `orchctl get` does not pay for ajv or the controller at start-up.
 */
// An import the bundler sees: bin/orchctl runs the bundle (scripts/bundle-cli.mjs), which holds commander.
import { Command } from 'commander';
import fs from 'node:fs';
import path from 'node:path';
import { registerSecretsFromEnv } from '../api/redact.js';
import { packageRoot } from '../config/paths.js';
import { reportError } from './output.js';

type Registration = { register(program: Command): void };

/**
 * Every command, in the order `orchctl --help` lists them, by the words that invoke it; each registers
 * its own flags and help (commands/<name>.cmd.ts).
 */
const COMMANDS: [words: string[], load: () => Promise<Registration>][] = [
  [['apply'], () => import('./commands/apply.cmd.js')],
  [['get'], () => import('./commands/get.cmd.js')],
  [['describe'], () => import('./commands/describe.cmd.js')],
  [['delete'], () => import('./commands/delete.cmd.js')],
  [['diff'], () => import('./commands/diff.cmd.js')],
  [['explain'], () => import('./commands/explain.cmd.js')],
  [['schema'], () => import('./commands/schema.cmd.js')],
  [['version'], () => import('./commands/version.cmd.js')],
  [['doctor'], () => import('./commands/doctor.cmd.js')],
  [['controller'], () => import('./commands/controller.cmd.js')],
  [['console'], () => import('./commands/console.cmd.js')],
  [['node'], () => import('./commands/node.cmd.js')],
  [['config'], () => import('./commands/config.cmd.js')],
  [['store'], () => import('./commands/store.cmd.js')],
  [['logs', 'attach'], () => import('./commands/logs.cmd.js')],
  [['send'], () => import('./commands/send.cmd.js')],
  [['judge'], () => import('./commands/judge.cmd.js')],
  [['approve', 'reject'], () => import('./commands/approve.cmd.js')],
  [['restart'], () => import('./commands/restart.cmd.js')],
  [['freeze', 'thaw'], () => import('./commands/freeze.cmd.js')],
  [['pipeline'], () => import('./commands/pipeline.cmd.js')],
  [['digest'], () => import('./commands/digest.cmd.js')],
  [['notify'], () => import('./commands/notify.cmd.js')],
  [['silence'], () => import('./commands/silence.cmd.js')],
  [['assess'], () => import('./commands/assess.cmd.js')],
  // Not '__complete': it completes against every command, so they all register then.
  [['completion'], () => import('./commands/completion.cmd.js')],
];

/**
 * The command word of `args` when only the global options that take a value come before it, else
 * undefined (help, --version, an unknown word: every command is registered then).
 */
function commandWord(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--home' || a === '--context') i++;
    else if (!a.startsWith('--home=') && !a.startsWith('--context=')) return a.startsWith('-') ? undefined : a;
  }
  return undefined;
}

function packageVersion(): string {
  // From the package root, not this file: it runs from dist/cli/ (the bundle) or dist/controller/cli/.
  const file = path.join(packageRoot(), 'package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * The program with its commands. Given the arguments, it registers only the command they invoke when
 * that is known, so a start-up loads one registration module instead of all of them.
 */
export async function buildProgram(args: string[] = []): Promise<Command> {
  const program = new Command('orchctl')
    .description('Declarative, Kubernetes-style controller for AI coding-agent sessions')
    .option('--home <dir>', 'state directory (default $ORCHCTL_HOME or ~/.orchctl)')
    .option('--context <name>', 'the context of $ORCHCTL_HOME/config whose store to use (docs/contexts.md)')
    // A usage error is one line and a pointer to the help, not the whole help text.
    .showHelpAfterError("Run 'orchctl --help' for usage.")
    .enablePositionalOptions()
    .option('--version', 'print the orchctl version and exit')
    .on('option:version', () => {
      process.stdout.write(`orchctl v${packageVersion()}\n`);
      process.exit(0);
    });

  const word = commandWord(args);
  const only = COMMANDS.find(([words]) => word !== undefined && words.includes(word));
  const registrations = await Promise.all((only ? [only] : COMMANDS).map(([, load]) => load()));
  for (const registration of registrations) registration.register(program);
  return program;
}

export async function main(argv = process.argv): Promise<number> {
  // A closed pipe (`orchctl get ... | head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
  });
  registerSecretsFromEnv(); // keys in this process's environment never reach its output
  try {
    await (await buildProgram(argv.slice(2))).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
}
