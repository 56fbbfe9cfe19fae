// What the wait for a settled page (`wait_until: settled`) found: whether the page's picture and
// network came to rest before the cap, and if not, what still moved. The verdict's `not_settled`
// warning is written from it (capture-warnings.ts).

/** `settle_timeout`'s default: the longest wait for a page to settle after `load`, ms. */
export const SETTLE_TIMEOUT_DEFAULT_MS = 8_000;
/** The most `settle_timeout` may ask for, ms (the wait never takes more than half the capture time-out). */
export const SETTLE_TIMEOUT_MAX_MS = 30_000;

/** A rectangle of the viewport (or of the element or clip asked for), in CSS pixels. */
export interface SettleRegion {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** How the wait for a settled page ended. */
export interface SettleReport {
  /** True when the page settled before the cap; false when the picture was taken at the cap. */
  settled: boolean;
  /** How long the wait lasted, from `load`, in ms. */
  waitedMs: number;
  /** The cap (`settle_timeout`), in ms. */
  capMs: number;
  /** What was still not at rest at the cap (empty when settled): fonts loading, the network busy, the picture changing. */
  holding: ('fonts' | 'network' | 'picture')[];
  /** Where the picture was still changing at the cap, and for how long it had kept changing (ms); null when it was not. */
  changing: (SettleRegion & { forMs: number }) | null;
  /** Regions left out of the comparison because they kept changing on their own (a clock, a counter, a spinner). */
  ignored: SettleRegion[];
  /** Ordinary requests still in flight at the cap (addresses, at most a few). */
  busy: string[];
}
