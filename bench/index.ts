/**
 * The benchmark list. To add one: write bench/modules/<name>.ts exporting a `Bench`
 * (see types.ts), import it here and append it. `npm run bench [name...]` runs them.
 */
import type { Bench } from './types.js';
import { applyBench } from './modules/apply-1000.js';
import { cliGetBench } from './modules/cli-get.js';
import { storeCasBench } from './modules/store-cas.js';
import { controllerBench } from './modules/controller.js';
import { metricsBench } from './modules/metrics.js';
import { eventIngestBench } from './modules/event-ingest.js';
import { paneClassifyBench } from './modules/pane-classify.js';
import { detectorBench } from './modules/detector.js';
import { notifyLatencyBench } from './modules/notify-latency.js';
import { autopilotBench } from './modules/autopilot.js';
import { storeEtcdBench } from './modules/store-etcd.js';
import { multihostBench, multihostFailoverBench } from './modules/multihost.js';
import { corpusBench } from './modules/corpus.js';
import { scaleBench } from './modules/scale.js';
import { soakBench } from './modules/soak.js';
import { consoleBench } from './modules/console.js';

export const benches: Bench[] = [
  cliGetBench,
  applyBench,
  storeCasBench,
  controllerBench,
  metricsBench,
  eventIngestBench,
  paneClassifyBench,
  detectorBench,
  notifyLatencyBench,
  autopilotBench,
  storeEtcdBench,
  multihostBench,
  multihostFailoverBench,
  corpusBench,
  scaleBench,
  soakBench,
  consoleBench,
];
