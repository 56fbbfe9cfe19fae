import { type Static, Type } from 'typebox';

import { IsoSeconds, JobId, Nullable } from './common.js';
import { MAX_CALLBACK_URL_LENGTH, ScreenshotRequest } from './v1.js';

// The shapes of /v1/monitors: a monitor is a POST /v1/screenshot request (every capture field as
// that endpoint takes them) run on a schedule, each run compared with the one before.

/** The fields of a monitor that are not capture fields. */
export const MONITOR_FIELDS = ['name', 'schedule', 'threshold', 'mask_selectors', 'paused', 'baseline', 'callback_url', 'pause_after_inconclusive', 'notify', 'mask_rects', 'propose_masks'] as const;

/** The capture fields of a screenshot request a monitor does not take: its checks are always fresh, and it sends its own webhooks. */
const NOT_FOR_MONITORS = ['cache_ttl', 'callback_url'] as const;

const captureFields = Object.fromEntries(
  Object.entries(ScreenshotRequest.properties).filter(([name]) => !(NOT_FOR_MONITORS as readonly string[]).includes(name)),
) as Omit<typeof ScreenshotRequest.properties, (typeof NOT_FOR_MONITORS)[number]>;

/** The names of the capture fields a monitor takes. */
export const MONITOR_CAPTURE_FIELDS = Object.keys(captureFields);

export const MonitorSchedule = Type.Union(
  [
    Type.Object(
      {
        cron: Type.String({ minLength: 9, maxLength: 256, description: 'A cron expression of 5 fields (minute hour day-of-month month day-of-week)' }),
        timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone the expression is read in; UTC when absent' })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { every_minutes: Type.Integer({ minimum: 1, maximum: 525_600, description: 'Minutes between checks (at least the admin floor, 1 by default)' }) },
      { additionalProperties: false },
    ),
  ],
  { description: '`{cron, timezone?}` or `{every_minutes}`' },
);
export type MonitorSchedule = Static<typeof MonitorSchedule>;

const Rect = {
  x: Type.Number({ minimum: 0, maximum: 100_000 }),
  y: Type.Number({ minimum: 0, maximum: 1_000_000 }),
  width: Type.Number({ minimum: 1, maximum: 100_000 }),
  height: Type.Number({ minimum: 1, maximum: 1_000_000 }),
};
const RectShape = Type.Object(Rect, { additionalProperties: false, description: 'A rectangle in CSS px' });

export const MaskRect = Type.Object(
  { ...Rect, tolerance: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Share of its pixels that may differ before they count; without it the rectangle is ignored' })) },
  { additionalProperties: false },
);

export const ChangeRegion = Type.Object(
  {
    kind: Type.Enum(['changed', 'inserted', 'removed', 'moved']),
    before: Nullable(RectShape),
    after: Nullable(RectShape),
  },
  { additionalProperties: false, description: 'Where the picture changed: its rectangle in the baseline and in the new picture, CSS px; null where it has none' },
);

export const MonitorNotify = Type.Object(
  {
    email: Type.Optional(
      Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 20, default: [], description: 'Addresses mailed each event through the SMTP server of the admin settings' }),
    ),
    slack_url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX_CALLBACK_URL_LENGTH, description: 'A Slack incoming webhook' }))),
    teams_url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX_CALLBACK_URL_LENGTH, description: 'A Microsoft Teams incoming webhook or Workflows URL' }))),
  },
  {
    additionalProperties: false,
    description:
      'Where monitor.changed, monitor.inconclusive and monitor.failed are told besides callback_url, text change first. The URLs are kept sealed and shown by their origin; ' +
      'in a change, a field left out (or a URL given back as shown) is kept, null removes a URL',
  },
);

const monitorFields = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'A name to tell monitors apart' }))),
  schedule: MonitorSchedule,
  threshold: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, default: 0.001, description: 'Fraction of pixels that must differ for a check to count as changed' }),
  ),
  mask_selectors: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
      maxItems: 100,
      default: [],
      description: 'Elements painted over in every picture before it is taken (clocks, ads, carousels), so they never count as a change',
    }),
  ),
  callback_url: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: MAX_CALLBACK_URL_LENGTH, description: 'Receives monitor.changed, monitor.inconclusive and monitor.failed, signed like every webhook' })),
  ),
  paused: Type.Optional(Type.Boolean({ default: false, description: 'A paused monitor runs no scheduled checks (a run asked for still runs)' })),
  baseline: Type.Optional(
    Type.Enum(['previous', 'pinned'], { default: 'previous', description: 'Compare with the previous completed check, or with the pinned one' }),
  ),
  mask_rects: Type.Optional(
    Type.Array(MaskRect, { maxItems: 100, description: 'Rectangles (CSS px) left out of every comparison, or with tolerance counted only past that share of their pixels' }),
  ),
  propose_masks: Type.Optional(
    Type.Boolean({
      default: true,
      description:
        'Capture the first baseline twice, a few seconds apart, and propose masks (proposed_masks) where the two differ: clocks, carousels, live counters. ' +
        'On for a new monitor; monitors created before it existed read false',
    }),
  ),
  pause_after_inconclusive: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, default: 5, description: 'Inconclusive checks in a row after which the monitor pauses itself (paused_reason says why)' }),
  ),
  notify: Type.Optional(MonitorNotify),
};

export const MonitorRequest = Type.Object(
  { ...captureFields, ...monitorFields },
  { additionalProperties: false, description: 'A screenshot request (url or html and every capture field) with a schedule. Any field not listed is refused with 400 naming it.' },
);
export type MonitorRequest = Static<typeof MonitorRequest>;

export const MonitorUpdate = Type.Partial(MonitorRequest, {
  additionalProperties: false,
  description: 'Any fields of a monitor; capture fields given replace the monitor\'s (url and html replace each other), the rest are kept',
});

/** The verdicts of a completed check; null while it is pending, and for a failed or skipped one. */
const CheckVerdict = Type.Enum(['first', 'changed', 'unchanged', 'inconclusive'], {
  description: 'first: nothing to compare with; inconclusive: the capture\'s warnings say the picture cannot be trusted (inconclusive_codes), so it was compared with nothing and never becomes a baseline',
});

export const TextChange = Type.Object(
  {
    added: Type.Array(Type.String(), { description: 'Lines of the page\'s text the check has and its baseline had not (at most 20, each at most 200 characters)' }),
    removed: Type.Array(Type.String(), { description: 'Lines the baseline had and the check has not (at most 20, each at most 200 characters)' }),
  },
  { additionalProperties: false },
);

/** The fields a check and its monitor.changed event share: what was found, said first in words. */
const checkFindings = {
  verdict: Nullable(CheckVerdict),
  inconclusive_codes: Type.Array(Type.String(), { description: 'The warning codes of the capture that made the check inconclusive; [] otherwise' }),
  // null when the text is the same, or nothing was compared.
  text_change: Nullable(TextChange),
  pixels_only: Type.Boolean({ description: 'Pixels changed and the text did not (an image, a colour, a layout shift)' }),
  regions: Type.Array(ChangeRegion, { description: 'Where the picture changed (at most 50): rows inserted, removed or moved, and pixels changed in place' }),
};

const LastCheck = Type.Object(
  {
    job_id: Nullable(JobId),
    at: IsoSeconds,
    status: Type.Enum(['pending', 'completed', 'failed', 'skipped']),
    changed: Nullable(Type.Boolean()),
    verdict: Nullable(CheckVerdict),
  },
  { additionalProperties: false },
);

export const Monitor = Type.Object(
  {
    id: Type.String({ pattern: '^mon_[0-9a-f]{24}$' }),
    account_id: Type.String(),
    name: Nullable(Type.String()),
    url: Type.String({ description: 'The page (about:html for an html document)' }),
    capture: Type.Record(Type.String(), Type.Unknown(), { description: 'The capture fields, secret ones (headers, cookies, http_auth, html) left out' }),
    secret_fields: Type.Array(Type.String(), { description: 'The secret capture fields the monitor has, kept sealed' }),
    schedule: MonitorSchedule,
    threshold: Type.Number(),
    mask_selectors: Type.Array(Type.String()),
    mask_rects: Type.Array(MaskRect),
    propose_masks: Type.Boolean(),
    proposed_masks: Type.Array(RectShape, { description: 'Masks proposed from the first baseline, read-only: POST …/proposed-masks/accept makes them mask_rects, …/reject drops them' }),
    callback_url: Nullable(Type.String()),
    notify: Type.Object(
      {
        email: Type.Array(Type.String()),
        slack_url: Nullable(Type.String({ description: 'The Slack URL\'s origin and "/…": the URL holds its token, so it is kept sealed and never shown' })),
        teams_url: Nullable(Type.String({ description: 'The Teams URL\'s origin and "/…", as slack_url' })),
      },
      { additionalProperties: false },
    ),
    paused: Type.Boolean(),
    baseline: Type.Enum(['previous', 'pinned']),
    pinned_job_id: Nullable(JobId),
    pause_after_inconclusive: Type.Integer(),
    paused_reason: Nullable(Type.String({ description: 'Why the monitor paused itself; null when it did not' })),
    next_run_at: Nullable(IsoSeconds),
    last_check: Nullable(LastCheck),
    created_at: IsoSeconds,
  },
  { additionalProperties: false },
);
export type Monitor = Static<typeof Monitor>;

export const MonitorList = Type.Object({ monitors: Type.Array(Monitor) }, { additionalProperties: false });

export const MonitorCheck = Type.Object(
  {
    job_id: Nullable(JobId),
    at: IsoSeconds,
    status: Type.Enum(['pending', 'completed', 'failed', 'skipped'], { description: 'skipped: no job was made (error says why, e.g. the daily limit)' }),
    changed: Nullable(Type.Boolean({ description: 'difference > threshold; null when nothing was compared (the first check, a failure)' })),
    difference: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Differing pixels / all pixels; 1 when the size changed' })),
    baseline_job_id: Nullable(JobId),
    screenshot_url: Nullable(Type.String({ format: 'uri' })),
    diff_url: Nullable(Type.String({ format: 'uri', description: 'The changed pixels in red over a faded copy of the new picture; null when none differ' })),
    status_url: Nullable(Type.String({ format: 'uri' })),
    error: Nullable(Type.String()),
    picture_scale: Nullable(
      Type.Number({ exclusiveMinimum: 0, description: 'Image pixels per CSS pixel of its picture (the device scale, times an image_width/image_height resize): regions and masks, in CSS px, map onto the picture by it; null for checks of earlier versions' }),
    ),
    mask_probe: Type.Boolean({
      description: 'The first baseline\'s second capture, taken a few seconds after it to propose masks (propose_masks): what it found is in the monitor\'s proposed_masks; it sends no change webhook',
    }),
    ...checkFindings,
  },
  { additionalProperties: false },
);
export type MonitorCheck = Static<typeof MonitorCheck>;

export const MonitorCheckList = Type.Object(
  { checks: Type.Array(MonitorCheck), next_before: Nullable(Type.String({ description: 'Pass as before for the next page; null on the last' })) },
  { additionalProperties: false },
);

export const MonitorChecksQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    before: Type.Optional(Type.String({ maxLength: 64, description: 'A check’s job_id (or next_before): only older checks' })),
  },
  { additionalProperties: false },
);

export const MonitorRun = Type.Object(
  {
    job_id: JobId,
    status: Type.Enum(['pending']),
    status_url: Type.String({ format: 'uri' }),
  },
  { additionalProperties: false },
);

/** What a callback_url of a monitor receives in `data`. */
export const MonitorEventData = Type.Object(
  {
    monitor_id: Type.String(),
    name: Nullable(Type.String()),
    url: Type.String(),
    job_id: JobId,
    at: IsoSeconds,
    difference: Nullable(Type.Number()),
    threshold: Type.Number(),
    screenshot_url: Nullable(Type.String({ format: 'uri' })),
    baseline_screenshot_url: Nullable(Type.String({ format: 'uri' })),
    diff_url: Nullable(Type.String({ format: 'uri' })),
    error: Nullable(Type.String()),
    ...checkFindings,
  },
  { additionalProperties: false },
);
export type MonitorEventData = Static<typeof MonitorEventData>;

/** POST /admin/api/monitors: a monitor of this account, its checks made as jobs of the account's oldest active key. */
export const AdminMonitorCreate = Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true });

export const MONITOR_SCHEMAS = { Monitor, MonitorList, MonitorCheck, MonitorCheckList, MonitorRun, MonitorEventData };
