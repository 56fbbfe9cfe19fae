import type { CaptureEngine, CaptureRequest, CaptureResult } from '../../server/capture/engine.js';

/** What a fake capture does: give a result, throw an error, or wait for release() (or its abort). */
export type FakeOutcome = CaptureResult | Error | 'held';

/** A capture's result as a page that loaded well gives it. */
export function capturedPage(fields: Partial<CaptureResult> = {}): CaptureResult {
  return {
    image: Buffer.from('picture'),
    format: 'png',
    width: 1280,
    height: 800,
    pictureScale: 1,
    truncated: false,
    html: '<title>Example</title>',
    userAgent: 'fake',
    blockedRequests: 0,
    httpStatus: 200,
    finalUrl: 'https://example.com/',
    pageTitle: 'Example',
    warnings: [],
    ...fields,
  };
}

/**
 * A capture engine that starts no browser: each capture takes the next outcome of its script
 * (a page captured well once the script runs out) and every request is kept.
 */
export class FakeCaptureEngine implements CaptureEngine {
  readonly name = 'fake';
  readonly requests: CaptureRequest[] = [];
  private readonly script: FakeOutcome[];
  private readonly held = new Set<() => void>();

  constructor(...script: FakeOutcome[]) {
    this.script = script;
  }

  capture(request: CaptureRequest): Promise<CaptureResult> {
    this.requests.push(request);
    const outcome = this.script.shift() ?? capturedPage();
    if (outcome instanceof Error) return Promise.reject(outcome);
    if (outcome !== 'held') return Promise.resolve(outcome);
    return new Promise((resolve, reject) => {
      const release = () => resolve(capturedPage());
      this.held.add(release);
      request.signal?.addEventListener('abort', () => {
        this.held.delete(release);
        reject(request.signal!.reason);
      });
    });
  }

  /** Captures waiting for release(). */
  holding(): number {
    return this.held.size;
  }

  /** Lets every held capture end with a page captured well. */
  release(): void {
    for (const release of this.held) release();
    this.held.clear();
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  isReady(): boolean {
    return true;
  }

  chromiumVersion(): string {
    return '0.0.0.0';
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
