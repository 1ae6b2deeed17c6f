import type { Command } from 'commander';
import { registry } from '../../config/crds.js';
import { openContext, type GlobalOptions } from '../context.js';
import { out } from '../output.js';

const BASH = `# orchctl bash completion. Load with: source <(orchctl completion bash)
_orchctl_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  COMPREPLY=( $(compgen -W "$(orchctl __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _orchctl_complete orchctl
`;

export function completionCommand(shell: string): void {
  if (shell === 'bash') return void out(BASH);
  if (shell === 'zsh')
    return void out(
      '# orchctl zsh completion. Load with: source <(orchctl completion zsh)\n' +
        `autoload -U +X bashcompinit && bashcompinit\n${BASH}`,
    );
  throw new Error(`unsupported shell "${shell}": use bash or zsh`);
}

const KIND_COMMANDS = new Set(['get', 'describe', 'delete', 'explain', 'logs', 'attach']);
/** Verbs that work on one kind: its name comes first (`orchctl approve decision NAME`). */
const ONE_KIND: Record<string, string> = { approve: 'decision', reject: 'decision', restart: 'session' };

/** Candidates for the word after `words` (hidden `__complete` command used by the scripts). */
export async function completeWords(program: Command, words: string[], g: GlobalOptions): Promise<string[]> {
  const positional = words.filter((w) => !w.startsWith('-'));
  const [cmdName, ...rest] = positional;
  const cmd = program.commands.find((c) => c.name() === cmdName);
  if (!cmd) return program.commands.filter((c) => !c.name().startsWith('__')).map((c) => c.name());
  const flags = cmd.options.flatMap((o) => [o.long, o.short]).filter((x): x is string => !!x);
  if (KIND_COMMANDS.has(cmdName) && rest.length === 0 && cmdName !== 'logs' && cmdName !== 'attach')
    return [...registry().kinds.flatMap((k) => [k.plural, ...k.shortNames]), ...flags];
  if (ONE_KIND[cmdName] && rest.length === 0) return [ONE_KIND[cmdName], ...flags];
  const kindName = cmdName === 'logs' || cmdName === 'attach' ? 'agentsessions' : rest[0];
  const kind = kindName ? registry().tryResolve(kindName) : undefined;
  if (!kind) return flags;
  const ctx = openContext(g, { readonly: true });
  try {
    const { items } = await ctx.store.list(kind.kind);
    return [...items.map((o) => o.metadata.name), ...flags];
  } finally {
    await ctx.close();
  }
}
