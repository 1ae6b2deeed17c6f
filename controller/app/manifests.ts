/**
 * `orchctl controller --manifests DIR`: the directory is applied once the caches are filled and
 * again whenever a YAML or JSON file in it changes (debounced), like `orchctl apply -f DIR -R`.
 * A bad manifest is logged and changes nothing.
 */
import chokidar, { type FSWatcher } from 'chokidar';
import { registry } from '../config/crds.js';
import { readManifests } from '../config/manifest.js';
import { applyPrepared, prepareManifests, ValidationFailed } from '../client/apply.js';
import type { Logger } from '../runtime/log.js';
import type { Runnable } from '../runtime/manager.js';
import type { Store } from '../store/store.js';

export async function applyManifests(store: Store, dir: string, log: Logger): Promise<void> {
  try {
    const { docs, errors } = readManifests([dir], true);
    if (errors.length) throw new ValidationFailed(errors);
    const prepared = prepareManifests(docs, registry());
    const results = await applyPrepared(store, prepared, {});
    const changed = results.filter((r) => r.action !== 'unchanged');
    for (const r of changed) log.info(`manifests: ${r.kind.singular}.orchctl.io/${r.name} ${r.action}`);
  } catch (e) {
    if (e instanceof ValidationFailed) for (const x of e.errors) log.error(`manifests not applied: ${x.message}`);
    else log.error(`manifests in ${dir} not applied: ${(e as Error).message}`);
  }
}

/** Applies `dir` again 150 ms after the last change to a manifest file in it. */
export class ManifestWatcher implements Runnable {
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.watcher = chokidar.watch(this.dir, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 25 },
    });
    this.watcher.on('all', (_ev: string, file: string) => {
      if (!/\.(ya?ml|json)$/.test(file)) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void applyManifests(this.store, this.dir, this.log), 150);
    });
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer); // an apply after the store is closed could only fail
    await this.watcher?.close();
  }
}
