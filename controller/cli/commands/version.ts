import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../config/paths.js';
import { openContext, type GlobalOptions, resolveTarget } from '../context.js';
import { out } from '../output.js';

export function orchctlVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

interface VersionInfo {
  clientVersion: { orchctl: string; node: string; platform: string };
  store?: { backend: string; path: string; revision: number };
  controller?: { holderIdentity: string; renewTime: string } | null;
}

export async function versionCommand(opts: { output?: string; client?: boolean }, g: GlobalOptions): Promise<void> {
  const info: VersionInfo = {
    clientVersion: {
      orchctl: `v${orchctlVersion()}`,
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
  };
  if (!opts.client) {
    const ctx = openContext(g, { readonly: true });
    try {
      const lease = await ctx.store.getLease('orchctl-controller');
      const { location: loc } = await resolveTarget(g);
      info.store = {
        backend: loc.backend,
        path: loc.backend === 'sqlite' ? loc.path : loc.endpoints.join(','),
        revision: await ctx.store.revision(),
      };
      info.controller = lease ? { holderIdentity: lease.holderIdentity, renewTime: lease.renewTime } : null;
    } finally {
      await ctx.close();
    }
  }
  if (opts.output === 'json') return void out(JSON.stringify(info, null, 2) + '\n');
  const c = info.clientVersion;
  out(`Client Version: ${c.orchctl} (node ${c.node}, ${c.platform})\n`);
  if (info.store) {
    const s = info.store;
    out(`Store: ${s.backend} ${s.path} (revision ${s.revision})\n`);
    const ctl = info.controller;
    out(`Controller: ${ctl ? `${ctl.holderIdentity} (lease renewed ${ctl.renewTime})` : 'not running'}\n`);
  }
}
