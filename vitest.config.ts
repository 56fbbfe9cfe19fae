import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    // Chromium-backed suites share two cores; running files one at a time keeps timings sane.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll's own default is one second: a click, an API round trip and a render in a
    // Chromium on a loaded machine can take longer. What a poll waits for either comes or the
    // test fails at this bound, so a longer bound slows no passing test.
    expect: { poll: { timeout: 15_000, interval: 50 } },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
