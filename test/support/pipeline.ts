/**
 * The world of the pipeline tests: the quickstart's simulated agent as an Agent (its keywords
 * [report], [block:REASON], [idle] drive a phase), Pipeline manifests over the harness's
 * repository, and readers of what the controller wrote (the pipeline, its phases' sessions, run
 * prompts and workspaces, Events).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Pipeline } from '../../controller/api/pipeline.js';
import { API_VERSION } from '../../controller/api/types.js';
import type { EventObject } from '../../controller/client/events.js';
import { ROOT } from './cli.js';
import type { Harness } from './controller-harness.js';

export const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');

/** The simulated agent, its prompt as an argument (its terminal stays free for a resume), at a quick pace. */
export const simAgent = {
  apiVersion: API_VERSION,
  kind: 'Agent',
  metadata: { name: 'sim' },
  spec: {
    command: [process.execPath, SIM_AGENT],
    promptDelivery: 'argument',
    env: [{ name: 'SIM_AGENT_STEP_MS', value: '100' }],
  },
};

/** A Pipeline whose phases run the sim agent in `repo`, each with its prompt. */
export function pipelineOf(name: string, repo: string, phases: [string, string][], extra: object = {}) {
  return {
    apiVersion: API_VERSION,
    kind: 'Pipeline',
    metadata: { name },
    spec: {
      phases: phases.map(([phase, prompt]) => ({ name: phase, template: { agentRef: 'sim', workdir: repo, prompt } })),
      ...extra,
    },
  };
}

export const getPipeline = async (h: Harness, name: string) =>
  (await h.store.get({ kind: 'Pipeline', namespace: 'default', name })) as Pipeline | undefined;

/** The pipeline once `check` holds for it. */
export function pipelineWhen(h: Harness, name: string, what: string, check: (p: Pipeline) => boolean, ms = 30_000) {
  return h.waitFor(
    what,
    async () => {
      const p = await getPipeline(h, name);
      return p && check(p) ? p : undefined;
    },
    ms,
  );
}

export const phaseOfPipeline = (p: Pipeline | undefined, phase: string) =>
  p?.status?.phases?.find((x) => x.name === phase);

export const workspaceOf = (h: Harness, session: string, run: number) =>
  path.join(h.home, 'sessions', 'default', session, String(run));

export const promptOf = (h: Harness, session: string, run: number) =>
  fs.readFileSync(path.join(workspaceOf(h, session, run), 'prompt.md'), 'utf8');

/** The pipeline's Events, oldest first. */
export async function pipelineEvents(h: Harness, name: string): Promise<EventObject[]> {
  return (await h.events(name)).filter(
    (e) => (e.involvedObject as { kind: string }).kind === 'Pipeline',
  ) as EventObject[];
}
