/**
 * The web console under test: the built `orchctl console --print-url` against a harness's home,
 * and a real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core.
 */
import { execa, type ResultPromise } from 'execa';
import { type Browser, chromium } from 'playwright-core';
import { BIN, ROOT } from './cli.js';
import type { Harness } from './controller-harness.js';

export const CHROMIUM = process.env.ORCHCTL_CHROMIUM ?? '/usr/bin/chromium';

export interface ConsoleProcess {
  /** http://127.0.0.1:PORT */
  base: string;
  /** The printed URL that logs in. */
  loginUrl: string;
  proc: ResultPromise;
  log: string[];
  stop(): Promise<void>;
}

/** Starts `orchctl console --port 0 --print-url` and waits for the URL it prints. */
export async function startConsole(h: Harness, args: string[] = []): Promise<ConsoleProcess> {
  const proc = execa(BIN, ['console', '--port', '0', '--print-url', ...args], {
    cwd: ROOT,
    env: h.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  const log: string[] = [];
  proc.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
  const loginUrl = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('http'));
      if (line) resolve(line.trim());
    });
    void proc.then((r) => reject(new Error(`orchctl console exited ${r.exitCode}: ${log.join('')}`)));
  });
  return {
    base: new URL(loginUrl).origin,
    loginUrl,
    proc,
    log,
    async stop() {
      proc.kill('SIGTERM');
      await proc;
    },
  };
}

/** Headless Chromium. Root (in CI containers) has no user namespace sandbox: --no-sandbox there only. */
export function launchChromium(): Promise<Browser> {
  const root = process.getuid?.() === 0;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: root ? ['--no-sandbox'] : [] });
}
