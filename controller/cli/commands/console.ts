/**
 * `orchctl console`: the web console (controller/console/, docs/console.md) on 127.0.0.1, over the
 * store this command's context names, until SIGINT/SIGTERM. `--print-url` prints the URL that logs
 * in (the access token in its fragment) once it listens.
 */
import path from 'node:path';
import { orchctlHome } from '../../config/paths.js';
import { consoleAddress, DEFAULT_CONSOLE_PORT, type ConsoleFlags } from '../../console/address.js';
import { startConsole } from '../../console/server.js';
import { createLogger } from '../../runtime/log.js';
import { type GlobalOptions, openContext } from '../context.js';
import { out } from '../output.js';

export interface ConsoleOptions extends ConsoleFlags {
  address?: string;
  port?: string;
  printUrl?: boolean;
  externalUrl?: string;
  tmuxSocket?: string;
}

export async function consoleCommand(opts: ConsoleOptions, g: GlobalOptions): Promise<void> {
  const host = opts.address ?? '127.0.0.1';
  const addr = consoleAddress(`${host.includes(':') ? `[${host}]` : host}:${opts.port ?? DEFAULT_CONSOLE_PORT}`, opts);
  const log = createLogger({});
  const ctx = openContext(g);
  const home = g.home ? path.resolve(g.home) : orchctlHome();
  let server: Awaited<ReturnType<typeof startConsole>>;
  try {
    server = await startConsole({
      store: ctx.store,
      home,
      ...addr,
      tmuxSocket: opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl',
      externalUrl: opts.externalUrl,
      log,
    });
  } catch (e) {
    await ctx.close();
    throw e;
  }
  out(`${opts.printUrl ? server.loginUrl : server.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await ctx.close();
}
