import { type Static, Type } from 'typebox';

import { Count, ErrorBody, IsoSeconds, JobStatus, jobVariants, Nullable, OutputFormat, QueueStats } from './common.js';
import { StorageDestination } from './storage.js';
import { captureOptionFields } from './v1.js';

// The admin API's shapes (see common.ts for how they are used). The control panel's types
// are derived from these (renderer/src/admin-types.ts imports them as types only), so this
// file and common.ts import nothing that would not run in a browser.

export const PLANS = ['super_user', 'basic'] as const;
export const Plan = Type.Enum([...PLANS], { description: 'Only super_user may use the v1 API' });
export type Plan = Static<typeof Plan>;

const Limit = Type.Integer({ minimum: 0, maximum: 100_000_000 });

/**
 * What a key's captures, monitors, render links and webhooks may reach, within the admin's
 * egress settings: `"public"`, `"lan"`, or CIDR ranges and host names (egress/network-scope.ts).
 */
export const NetworkScope = Type.Union(
  [
    Type.Literal('public', { description: 'Public addresses only: no private, loopback or link-local address, even one the settings allow' }),
    Type.Literal('lan', { description: 'Whatever the egress settings allow (public and LAN addresses by default)' }),
    Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      minItems: 1,
      maxItems: 256,
      description: 'Public addresses, and the private ones these CIDR ranges and host names grant; a host name grants that name only, not its address',
    }),
  ],
  { description: 'Where the key may connect, within the egress settings' },
);
export type NetworkScope = Static<typeof NetworkScope>;

const accountFields = {
  email: Type.String({ minLength: 1, maxLength: 254, description: 'Stored lower-case; unique' }),
  email_verified: Type.Boolean(),
  plan: Plan,
  daily_limit: Limit,
  monthly_limit: Limit,
  default_network_scope: { ...NetworkScope, description: "The network scope of the account's new keys" },
};

export const Account = Type.Object(
  {
    id: Type.String(),
    ...accountFields,
    created_at: IsoSeconds,
    calls_today: Count('Calls made today (UTC)'),
    calls_this_month: Count('Calls made this month (UTC)'),
  },
  { additionalProperties: false },
);
export type Account = Static<typeof Account>;

export const AccountCreate = Type.Object(
  {
    email: accountFields.email,
    email_verified: Type.Optional(Type.Boolean({ default: false })),
    plan: Type.Optional({ ...Plan, default: 'super_user' }),
    daily_limit: Type.Optional(Limit),
    monthly_limit: Type.Optional(Limit),
    default_network_scope: Type.Optional({ ...accountFields.default_network_scope, default: 'lan' }),
  },
  { additionalProperties: false },
);
export type AccountCreate = Static<typeof AccountCreate>;

export const AccountUpdate = Type.Partial(Type.Object(accountFields), { additionalProperties: false });
export type AccountUpdate = Static<typeof AccountUpdate>;

export const WebhookSecret = Type.Object({ secret: Type.String({ pattern: '^whsec_' }) }, { additionalProperties: false });

const SigningSecretText = Type.String({
  pattern: '^sas_[A-Za-z0-9_-]{43}$',
  description: 'Signs render links (HMAC-SHA256 of the canonical query); shown this once',
});
export const SigningSecret = Type.Object({ signing_secret: SigningSecretText }, { additionalProperties: false });

export const RenderLink = Type.Object(
  { render_url: Type.String({ format: 'uri', description: 'GET /v1/render with the options asked for, key_id and signature' }) },
  { additionalProperties: false },
);

const KeyName = Type.String({ minLength: 1, maxLength: 100 });
const IpWhitelist = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 256,
  description: 'Addresses and CIDR ranges, IPv4 and IPv6; empty allows all',
});

const apiKeyFields = {
  id: Type.String(),
  account_id: Type.String(),
  name: KeyName,
  prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
  ip_whitelist: IpWhitelist,
  network_scope: NetworkScope,
  created_at: IsoSeconds,
  last_used_at: Nullable(IsoSeconds),
  revoked: Type.Boolean(),
  has_signing_secret: Type.Boolean({ description: 'Whether the key can sign render links (keys made before them need a rotation)' }),
};
export const ApiKey = Type.Object(apiKeyFields, { additionalProperties: false });
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyCreated = Type.Object(
  {
    ...apiKeyFields,
    key: Type.String({ pattern: '^sa_[A-Za-z0-9_-]{43}$', description: 'Shown this once' }),
    signing_secret: SigningSecretText,
  },
  { additionalProperties: false },
);
export type ApiKeyCreated = Static<typeof ApiKeyCreated>;

export const ApiKeyCreate = Type.Object(
  {
    name: Type.Optional({ ...KeyName, default: 'API key' }),
    ip_whitelist: Type.Optional({ ...IpWhitelist, default: [] }),
    network_scope: Type.Optional({ ...NetworkScope, description: "Where the key may connect; the account's default_network_scope when not given" }),
  },
  { additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const ApiKeyUpdate = Type.Object(
  {
    name: Type.Optional(KeyName),
    ip_whitelist: Type.Optional(IpWhitelist),
    network_scope: Type.Optional(NetworkScope),
    revoked: Type.Optional(Type.Boolean({ description: 'true revokes; a revoked key cannot be restored' })),
  },
  { additionalProperties: false },
);
export type ApiKeyUpdate = Static<typeof ApiKeyUpdate>;

/**
 * The capture options a job used, as the request named them, defaults left out; the values of
 * `headers`, `cookies` and `http_auth` are never shown: only the header and cookie names, and
 * whether credentials were given.
 */
const { headers: _headers, cookies: _cookies, http_auth: _httpAuth, ...shownOptionFields } = captureOptionFields;
export const JobOptionsView = Type.Object(
  {
    ...shownOptionFields,
    header_names: Type.Optional(Type.Array(Type.String(), { description: 'Names of the extra headers sent' })),
    cookie_names: Type.Optional(Type.Array(Type.String(), { description: 'Names of the cookies set' })),
    http_auth: Type.Optional(Type.Literal(true, { description: 'Present when HTTP Basic credentials were given' })),
    sealed_options: Type.Optional(
      Type.Array(Type.String(), { description: "Options too large for the job's record (over 1 KB together), kept sealed until it ends and not shown" }),
    ),
    upload: Type.Optional(Type.Literal(true, { description: "Present when the image is also uploaded to the account's storage destination" })),
    storage_path: Type.Optional(Type.String({ description: 'The key template of that upload' })),
  },
  { additionalProperties: false },
);

const adminJobs = jobVariants({
  account_id: Type.String(),
  email: Nullable(Type.String({ description: "The account's e-mail; null once the account is deleted" })),
  device: Type.Enum(['desktop', 'tablet', 'mobile']),
  format: OutputFormat,
  callback_url: Nullable(Type.String()),
  options: JobOptionsView,
  thumbnail_url: Type.Optional(
    Type.String({ format: 'uri', description: 'A 320 px wide WebP of the image (completed jobs with an image; not for pdf)' }),
  ),
  duration_ms: Nullable(Type.Integer({ minimum: 0 })),
  blocked_requests: Count('Sub-requests the egress guard refused'),
  expired: Type.Boolean(),
});
export const AdminJobPending = adminJobs.pending;
export const AdminJobProcessing = adminJobs.processing;
export const AdminJobCompleted = adminJobs.completed;
export const AdminJobFailed = adminJobs.failed;
export type AdminJob =
  | Static<typeof AdminJobPending>
  | Static<typeof AdminJobProcessing>
  | Static<typeof AdminJobCompleted>
  | Static<typeof AdminJobFailed>;

export const DayCounts = Type.Array(
  Type.Object(
    { date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }), count: Count('Calls that day') },
    { additionalProperties: false },
  ),
);
export type DayCounts = Static<typeof DayCounts>;

export const UsageByDay = Type.Object(
  {
    days: DayCounts,
    accounts: Type.Array(
      Type.Object({ account_id: Type.String(), email: Type.String(), days: DayCounts }, { additionalProperties: false }),
      { description: 'Empty when account_id is given' },
    ),
  },
  { additionalProperties: false },
);
export type UsageByDay = Static<typeof UsageByDay>;

const EgressRanges = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 256 });
const settingsFields = {
  concurrency: Type.Integer({ minimum: 1, maximum: 64, description: 'Captures at once' }),
  queue_limit: Type.Integer({ minimum: 1, maximum: 100_000 }),
  account_queue_share: Type.Integer({
    minimum: 1,
    maximum: 100,
    description: 'Percent of queue_limit one account may hold waiting or running (never fewer than 5 jobs); past it that account gets 503',
  }),
  navigation_timeout_ms: Type.Integer({ minimum: 1000, maximum: 300_000 }),
  capture_timeout_ms: Type.Integer({ minimum: 1000, maximum: 300_000 }),
  retention_days: Type.Integer({ minimum: 1, maximum: 3650, description: 'Days images and page HTML are kept' }),
  history_days: Type.Integer({
    minimum: 1,
    maximum: 3650,
    description: "Days job records are kept (with their files); usage per day is kept apart and stays",
  }),
  full_page_max_height: Type.Integer({ minimum: 1000, maximum: 100_000 }),
  egress_allow: { ...EgressRanges, description: 'CIDR ranges allowed although denied by default, as the admin saved them' },
  egress_allow_command_line: {
    ...EgressRanges,
    readOnly: true,
    description:
      'Ranges allowed at start by --egress-allow or SCREENSHOT_EGRESS_ALLOW; never saved. An update may send them back unchanged, never different',
  },
  egress_deny_lan: Type.Boolean({ description: 'Deny RFC 1918 and fc00::/7 targets too' }),
  public_base_url: Nullable(Type.String({ maxLength: 2048, description: 'Base of absolute addresses in responses; null: from the Host header' })),
  monitor_min_minutes: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1440, description: 'Shortest interval a monitor may run at, minutes (1 when absent)' }),
  ),
  monitors_per_account: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000, description: 'Monitors one account may have; creating one more is refused with 400 (100 when absent)' }),
  ),
  smtp: Type.Optional(
    Nullable(
      Type.Object(
        {
          host: Type.String({ minLength: 1, maxLength: 253 }),
          port: Type.Integer({ minimum: 1, maximum: 65_535 }),
          secure: Type.Boolean({ description: 'TLS from the start (port 465); false: STARTTLS when the server offers it' }),
          username: Nullable(Type.String({ maxLength: 256 })),
          password: Type.Optional(Type.String({ maxLength: 1024, writeOnly: true, description: 'Kept sealed and never read back; left out of an update, the saved one is kept' })),
          has_password: Type.Optional(Type.Boolean({ readOnly: true, description: 'A password is saved' })),
          from: Type.String({ minLength: 3, maxLength: 320, description: 'The From of monitor e-mails' }),
        },
        { additionalProperties: false },
      ),
    ),
  ),
};
export const Settings = Type.Object(settingsFields, { additionalProperties: false });
export type Settings = Static<typeof Settings>;
export const SettingsUpdate = Type.Partial(Settings, { additionalProperties: false });
export type SettingsUpdate = Static<typeof SettingsUpdate>;

const deliveryAttempt = Type.Object(
  {
    at: IsoSeconds,
    status_code: Nullable(Type.Integer({ description: "The receiver's status; null when none came" })),
    error: Nullable(Type.String()),
    duration_ms: Type.Integer({ minimum: 0 }),
    manual: Type.Boolean({ description: 'Asked for by the admin; does not use up the schedule' }),
  },
  { additionalProperties: false },
);
export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ description: 'Also the webhook-id header, the same on every attempt' }),
    job_id: Type.String(),
    account_id: Type.String(),
    url: Type.String(),
    type: Type.Enum(['screenshot.completed', 'screenshot.failed', 'monitor.changed', 'monitor.inconclusive', 'monitor.failed']),
    status: Type.Enum(['pending', 'succeeded', 'failed']),
    attempts: Type.Array(deliveryAttempt),
    next_attempt_at: Nullable(IsoSeconds),
    created_at: IsoSeconds,
    completed_at: Nullable(IsoSeconds),
  },
  { additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export type DeliveryAttempt = Static<typeof deliveryAttempt>;

export const Status = Type.Object(
  {
    queue: QueueStats,
    engine: Type.Object(
      {
        name: Type.String(),
        version: Nullable(Type.String()),
        ready: Type.Boolean({ description: 'True while any browser is up and taking captures' }),
        browsers: Type.Integer({ minimum: 1, description: 'Browser processes the captures are shared among (--browsers)' }),
        browsers_ready: Type.Integer({ minimum: 0, description: 'Of those, how many are up now' }),
      },
      { additionalProperties: false },
    ),
    captures_per_hour: Type.Array(
      Type.Object(
        { hour: IsoSeconds, completed: Count('Jobs completed that hour'), failed: Count('Jobs failed that hour') },
        { additionalProperties: false },
      ),
    ),
    api_base_url: Type.String({ format: 'uri' }),
    evidence_public_key: Type.String({ description: 'The Ed25519 key signing evidence bundles, base64 of its SubjectPublicKeyInfo, as GET /v1/evidence/public-key shows it' }),
  },
  { additionalProperties: false },
);
export type Status = Static<typeof Status>;

export const SessionOpen = Type.Object({ token: Type.String({ maxLength: 256 }) }, { additionalProperties: false });

// Queries. Values arrive as text; validation converts the numbers (validate.ts).

export const JobsQuery = Type.Object({
  status: Type.Optional(JobStatus),
  account_id: Type.Optional(Type.String({ maxLength: 64 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ maxLength: 64, description: 'next_before of the previous page' })),
});
export type JobsQuery = Static<typeof JobsQuery>;

export const UsageQuery = Type.Object({
  account_id: Type.Optional(Type.String({ maxLength: 64 })),
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366, default: 30 })),
});
export type UsageQuery = Static<typeof UsageQuery>;

export const WebhooksQuery = Type.Object({
  job_id: Type.Optional(Type.String({ maxLength: 64 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
});
export type WebhooksQuery = Static<typeof WebhooksQuery>;

/** The schemas the admin document names under components/schemas (request bodies are inline). */
export const ADMIN_SCHEMAS = {
  Error: ErrorBody,
  Account,
  WebhookSecret,
  ApiKey,
  ApiKeyCreated,
  SigningSecret,
  RenderLink,
  AdminJobPending,
  AdminJobProcessing,
  AdminJobCompleted,
  AdminJobFailed,
  UsageByDay,
  DayCounts,
  Settings,
  QueueStats,
  WebhookDelivery,
  Status,
  StorageDestination,
};
