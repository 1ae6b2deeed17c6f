/**
 * `orchctl node`: a node agent (kubelet-like) for this host — its Node registered with labels and
 * capacity under the node lease, and the runs of the sessions bound to it (docs/multi-host.md).
 * The same process as `orchctl controller` without the control plane (controller.ts runProcess).
 */
import { checkDns1123Subdomain, checkLabelValue, checkQualifiedName } from '../../api/names.js';
import type { GlobalOptions } from '../context.js';
import { type ProcessOptions, runProcess } from './controller.js';

export interface NodeOptions extends ProcessOptions {
  name?: string;
  label?: string[];
  maxSessions?: string;
}

/** `k=v` flags as labels (Kubernetes' syntax; the last of a repeated key wins). */
export function parseLabels(flags: string[] = []): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const f of flags) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new Error(`--label ${f}: expected key=value`);
    const k = f.slice(0, eq);
    const v = f.slice(eq + 1);
    const bad = checkQualifiedName(k) ?? checkLabelValue(v);
    if (bad) throw new Error(`--label ${f}: ${bad}`);
    labels[k] = v;
  }
  return labels;
}

export async function nodeCommand(opts: NodeOptions, g: GlobalOptions): Promise<void> {
  const badName = opts.name === undefined ? undefined : checkDns1123Subdomain(opts.name);
  if (badName) throw new Error(`--name ${opts.name}: ${badName}`);
  let maxSessions: number | undefined;
  if (opts.maxSessions !== undefined) {
    maxSessions = Number(opts.maxSessions);
    if (!Number.isInteger(maxSessions) || maxSessions < 0 || maxSessions > 10_000)
      throw new Error(`--max-sessions must be an integer from 0 to 10000, got "${opts.maxSessions}"`);
  }
  await runProcess(opts, g, {
    controlPlane: false,
    node: { name: opts.name, labels: parseLabels(opts.label), maxSessions, rename: !!opts.renameNode },
  });
}
