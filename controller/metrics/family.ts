/**
 * Metric families computed at scrape time from the informer caches (kube-state-metrics style).
 * Each scrape rebuilds the family from the objects that exist now, so a deleted object's series
 * disappear by construction (no remove() bookkeeping to forget) and a scrape reads memory only —
 * never tmux, git or the store.
 *
 * Why not a prom-client Gauge with collect(): 1000 sessions are ~30 000 series (the phase and
 * condition StateSets), and reset() + set() per series (label validation, hashing) followed by
 * the registry's generic label formatting cost ~200 ms a scrape on a 2-core box — four times the
 * budget. A family registers in the same prom-client Registry and is rendered by it (HELP, TYPE,
 * ordering, content type), but hands the registry each series with its label set already
 * written out through getForPromString(), the hook prom-client's own Histogram uses for the
 * text format; get() still returns plain label objects for getMetricsAsJSON().
 */
import type { Gauge, Registry } from 'prom-client';

/** Emits one series of an object: the values of the labels after the identity labels, and its value. */
export type Emit = (extraLabelValues: readonly string[], value: number) => void;

export interface FamilySpec<T> {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  /** The identity labels (e.g. namespace, agentsession) first, then the per-series ones. */
  labelNames: readonly string[];
  /** The objects that exist now (the informer cache). */
  objects: () => Iterable<T>;
  /** The identity label values of an object, in labelNames order. */
  id: (o: T) => readonly string[];
  /** Calls emit once per series the object has now. */
  series: (o: T, emit: Emit) => void;
}

const NONE = Object.freeze({});

/** Label value escaping of the text exposition format: backslash, double quote, newline. */
export function escapeLabelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v;
}

export class ScrapeFamily<T> {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly aggregator = 'sum' as const;

  constructor(
    registry: Registry,
    private readonly spec: FamilySpec<T>,
  ) {
    this.name = spec.name;
    this.help = spec.help;
    this.type = spec.type;
    // The registry needs only name/help/type/aggregator, get(), getForPromString() and reset().
    registry.registerMetric(this as unknown as Gauge);
  }

  private header() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator };
  }

  /** Plain label objects, for getMetricsAsJSON(). */
  async get() {
    const names = this.spec.labelNames;
    const values: { labels: Record<string, string>; value: number }[] = [];
    for (const o of this.spec.objects()) {
      const id = this.spec.id(o);
      this.spec.series(o, (extra, value) => {
        const labels: Record<string, string> = {};
        for (const [i, v] of [...id, ...extra].entries()) labels[names[i]] = v;
        values.push({ labels, value });
      });
    }
    return { ...this.header(), values };
  }

  /** The text format: each series written out once, the object's identity labels once per object. */
  async getForPromString() {
    const { labelNames, objects, id, series } = this.spec;
    const parts = labelNames.map((n, i) => `${i ? ',' : '{'}${n}="`);
    const values: { metricName: string; labels: object; sharedLabels: object; value: number }[] = [];
    for (const o of objects()) {
      const idValues = id(o);
      let prefix = this.name;
      for (let i = 0; i < idValues.length; i++) prefix += `${parts[i]}${escapeLabelValue(idValues[i])}"`;
      const first = idValues.length;
      series(o, (extra, value) => {
        let name = prefix;
        for (let i = 0; i < extra.length; i++) name += `${parts[first + i]}${escapeLabelValue(extra[i])}"`;
        if (labelNames.length) name += '}';
        values.push({ metricName: name, labels: NONE, sharedLabels: NONE, value });
      });
    }
    return { ...this.header(), values };
  }

  reset(): void {
    /* nothing is stored between scrapes */
  }
}

/** Unix seconds of an RFC 3339 timestamp, or undefined when absent or unparsable. */
export function unixSeconds(t: unknown): number | undefined {
  if (typeof t !== 'string') return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}
