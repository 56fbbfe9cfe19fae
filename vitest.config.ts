import { defineConfig } from 'vitest/config';

/*
 * Three tiers (docs/development.md, "Test tiers"):
 * - unit: pure logic and seams with fakes; no Chromium, no child process, no PostgreSQL or S3
 *   emulator, no HTTP server. Files named `*.unit.test.ts`, and the files listed here, which
 *   held to that rule before the name did. `npm run test:unit` runs them alone, in parallel.
 * - corpus: the real-page conformance, compared pixel by pixel with plain playwright captures.
 * - service: everything else (real Chromium, NeDB files, HTTP, PostgreSQL, S3 emulator).
 * A new file lands in `service` unless it is named for `unit`: a file wrongly left out of
 * `unit` only runs slower, one wrongly put in would make the fast lane start a browser.
 */

/** Files that were unit tests before `*.unit.test.ts` was the convention. */
const UNIT_FILES = [
  'test/api/screenshot-params.test.ts',
  'test/auth/admin-sessions.test.ts',
  'test/auth/ip-whitelist.test.ts',
  'test/capture/capture-clip.test.ts',
  'test/capture/chromium-path.test.ts',
  'test/capture/html-text.test.ts',
  'test/capture/image-encoder.test.ts',
  'test/capture/image-size.test.ts',
  'test/capture/page-traffic.test.ts',
  'test/config-files.test.ts',
  'test/config.test.ts',
  'test/contract/openapi-document.test.ts',
  'test/contract/validation-messages.test.ts',
  'test/egress/policy.test.ts',
  'test/egress/proxy-markers.test.ts',
  'test/egress/reserved-names.test.ts',
  'test/electron/packaging.test.ts',
  'test/electron/panel-navigation.test.ts',
  'test/electron/tray-state.test.ts',
  'test/helpers/clear-of-midnight.test.ts',
  'test/jobs/end-write-behind.test.ts',
  'test/jobs/failure-message.test.ts',
  'test/jobs/fair-order.test.ts',
  'test/jobs/history.test.ts',
  'test/jobs/job-list.test.ts',
  'test/limits/quota.test.ts',
  'test/logger.test.ts',
  'test/monitors/schedule.test.ts',
  'test/ops/docs-links.test.ts',
  'test/ops/metrics-labels.test.ts',
  'test/ops/prom-text.test.ts',
  'test/renderer/ip-whitelist.test.ts',
  'test/store/datafile-growth.test.ts',
  'test/store/datastores.test.ts',
  'test/store/job-options-legacy.test.ts',
  'test/store/job-secrets-legacy.test.ts',
  'test/store/monitor-secrets-legacy.test.ts',
  'test/uploads/storage-path.test.ts',
  'test/webhooks/retry-schedule.test.ts',
  'test/webhooks/signing.test.ts',
];
const UNIT = ['test/**/*.unit.test.ts', ...UNIT_FILES];

/** Real pages (the Debian corpus), real web apps and real-page patterns against a reference browser. */
const CORPUS = ['test/apps/apps-corpus.test.ts', 'test/capture/corpus-conformance.test.ts', 'test/capture/real-page-patterns.test.ts'];

export default defineConfig({
  test: {
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll's own default is one second: a click, an API round trip and a render in a
    // Chromium on a loaded machine can take longer. What a poll waits for either comes or the
    // test fails at this bound, so a longer bound slows no passing test.
    expect: { poll: { timeout: 15_000, interval: 50 } },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        // First, and files side by side: they are short and start nothing.
        test: { name: 'unit', include: UNIT, sequence: { groupOrder: 0 }, maxWorkers: 2 },
      },
      {
        extends: true,
        // Two files at a time: most of a service test waits (on a page, a server, a time-out), and
        // on two cores two files at a time ran the tier in 712 s against 1,386 s one at a time.
        test: { name: 'service', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...CORPUS], maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        // One at a time: its pictures are compared pixel by pixel, and its cases measured slower three at a time.
        test: { name: 'corpus', include: CORPUS, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
