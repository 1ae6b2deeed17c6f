/**
 * Metric families computed at scrape time from the informer caches (kube-state-metrics style).
 * Each scrape rebuilds the family from the objects that exist now, so a deleted object's series
 * disappear by construction (no remove() bookkeeping to forget) and a scrape reads memory only —
 * never tmux, git or the store.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export type Emit<L extends string> = (labels: Record<L, string>, value: number) => void;

export interface FamilySpec<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Calls emit once per series that exists now. */
  fill: (emit: Emit<L>) => void;
}

export function collectedGauge<L extends string>(registry: Registry, spec: FamilySpec<L>): Gauge<L> {
  return new Gauge<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames,
    registers: [registry],
    collect() {
      this.reset();
      spec.fill((labels, value) => this.set(labels, value));
    },
  });
}

/**
 * A counter whose value is read from an object's status (e.g. status.restarts), as
 * kube-state-metrics does for kube_pod_container_status_restarts_total: the object is the source
 * of truth, so the value survives a controller restart, and a drop (a new run resets restarts)
 * is an ordinary counter reset to Prometheus's rate()/increase().
 */
export function collectedCounter<L extends string>(registry: Registry, spec: FamilySpec<L>): Counter<L> {
  return new Counter<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames,
    registers: [registry],
    collect() {
      this.reset();
      spec.fill((labels, value) => this.inc(labels, value));
    },
  });
}

/** Unix seconds of an RFC 3339 timestamp, or undefined when absent or unparsable. */
export function unixSeconds(t: unknown): number | undefined {
  if (typeof t !== 'string') return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}
