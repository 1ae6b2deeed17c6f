/**
 * `orchctl doctor`'s checks of a Claude Code Agent's set-up (AgentDriver.setupChecks): the
 * onboarding state of the config a run will use, and whether ANTHROPIC_BASE_URL answers. Apart
 * from claude-code.ts so that the controller, which never runs them, does not load them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentSpec } from '../api/kinds.js';
import type { AgentCheck } from './driver.js';
import { resolveEnv } from './env.js';

const CONNECT_TIMEOUT_MS = 3000;

/** The Agent's environment as a run would see it (values from files are not read: only presence matters). */
function agentEnv(spec: AgentSpec): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const v of spec.env ?? []) {
    if (v.valueFrom?.file) {
      env[v.name] = fs.existsSync(v.valueFrom.file) ? '(from a file)' : undefined;
      continue;
    }
    try {
      env[v.name] = resolveEnv([v])[0].value;
    } catch {
      env[v.name] = undefined; // its source is missing: the run will say so
    }
  }
  return env;
}

/** A URL fit to print: no user or password. */
function printable(u: URL): string {
  const c = new URL(u.href);
  c.username = '';
  c.password = '';
  return c.href;
}

/** Whether anything answers HTTP at `base` (any status counts: the gateway is there). */
async function reach(base: string): Promise<AgentCheck> {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return { check: 'base-url', ok: false, message: `ANTHROPIC_BASE_URL ${JSON.stringify(base)} is not a URL` };
  }
  try {
    const r = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
    return { check: 'base-url', ok: true, message: `${printable(url)} answers (HTTP ${r.status})` };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    return {
      check: 'base-url',
      ok: false,
      message: `cannot reach ${printable(url)} (${why}): check ANTHROPIC_BASE_URL and that the gateway runs`,
    };
  }
}

/**
 * Claude Code's set-up: whether a run will meet its first-run screens or its connectivity check
 * (which goes to api.anthropic.com whatever ANTHROPIC_BASE_URL says, until onboarding is recorded),
 * and whether the configured base URL answers. `prepared`: whether a run gets a prepared config
 * directory with this environment (claude-code.ts's usesPreparedConfig for the Agent's hooks).
 */
export async function claudeSetupChecks(
  spec: AgentSpec,
  prepared: (env: Record<string, string | undefined>) => boolean,
): Promise<AgentCheck[]> {
  const env = agentEnv(spec);
  const checks: AgentCheck[] = [];
  if (prepared(env))
    checks.push({
      check: 'config',
      ok: true,
      message: 'each run gets a prepared config directory (onboarding done, workdir trusted, API key approved)',
    });
  else {
    const file = env.CLAUDE_CONFIG_DIR
      ? path.join(env.CLAUDE_CONFIG_DIR, '.claude.json')
      : path.join(env.HOME || '~', '.claude.json');
    let config: { hasCompletedOnboarding?: unknown } | undefined;
    try {
      config = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      config = undefined;
    }
    checks.push(
      config?.hasCompletedOnboarding === true
        ? { check: 'config', ok: true, message: `${file} records onboarding as done` }
        : {
            check: 'config',
            ok: false,
            message:
              `${file} ${config ? 'does not record onboarding as done' : 'is missing or unreadable'}: the first ` +
              'run checks api.anthropic.com whatever ANTHROPIC_BASE_URL says and exits 1 where it cannot reach ' +
              'it (AgentCannotConnect). Fix: give the Agent an ANTHROPIC_API_KEY (hooks.configDir auto, the ' +
              "template's) or set hooks.configDir: prepared; or run claude once by hand (docs/agents.md)",
          },
    );
  }
  if (env.ANTHROPIC_BASE_URL) checks.push(await reach(env.ANTHROPIC_BASE_URL));
  return checks;
}
