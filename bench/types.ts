/** What one benchmark module exports (see bench/index.ts for the list the harness runs). */
export interface Bench {
  /** Short id: selects it on the command line and names bench/results/<name>.json. */
  name: string;
  /** One line for the summary. */
  description: string;
  /** Run only when named (`npm run bench -- soak`): too long for the default all. */
  onlyWhenNamed?: boolean;
  /** Runs the benchmark; returns its figures (numbers in ms unless the key says otherwise). */
  run(): Promise<Record<string, unknown>>;
}
