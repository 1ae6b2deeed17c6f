/**
 * vitest globalSetup: before any test runs, every external program the suite starts must be on
 * PATH. A missing one fails the run at once with one line per program and its package, instead
 * of a test deep in the suite failing (or skipping) on a machine that lacks it.
 */
import { missingPrerequisites } from './prerequisites.js';

export default function setup(): void {
  const missing = missingPrerequisites();
  if (missing.length > 0) {
    throw new Error(
      `the test suite needs programs this machine does not have (test/prerequisites.json):\n${missing.join('\n')}`,
    );
  }
}
