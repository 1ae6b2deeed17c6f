import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every external program the tests start must be on PATH (test/prerequisites.json): fail at once if not.
    globalSetup: ['test/support/global-setup.ts'],
    // Integration tests drive real tmux, git and SQLite; give them room on a 2-core box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // The default reporter, then one closing `N passed, N failed` line (what CI reads).
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
