import { PLANS } from '../../auth/accounts.js';
import { CSRF_HEADER, CSRF_VALUE, SESSION_COOKIE } from '../admin-auth.js';
import { ERROR_SCHEMA, ISO_SECONDS, JOB_STATUS, QUEUE_STATS, count, jobOneOf, jobVariants, type JsonSchema } from './shared-schemas.js';

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schema = (name: string) => ref('schemas', name);

const ERRORS = {
  '400': ref('responses', 'BadRequest'),
  '401': ref('responses', 'Unauthorized'),
  '403': ref('responses', 'Forbidden'),
  '500': ref('responses', 'InternalError'),
};
const ERRORS_404 = { ...ERRORS, '404': ref('responses', 'NotFound') };

const idParam = (description: string) => ({ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description });
const ok = (description: string, body: JsonSchema) => ({ '200': { description, content: json(body) } });
const body = (s: JsonSchema) => ({ required: true, content: json(s) });
const noContent = { '204': { description: 'Done' } };

const ACCOUNT_FIELDS: Record<string, JsonSchema> = {
  email: { type: 'string', maxLength: 254, description: 'Stored lower-case; unique' },
  email_verified: { type: 'boolean' },
  plan: { type: 'string', enum: [...PLANS], description: 'Only super_user may use the v1 API' },
  daily_limit: { type: 'integer', minimum: 0, maximum: 100_000_000 },
  monthly_limit: { type: 'integer', minimum: 0, maximum: 100_000_000 },
};

const SETTINGS_FIELDS: Record<string, JsonSchema> = {
  concurrency: { type: 'integer', minimum: 1, maximum: 64, description: 'Captures at once' },
  queue_limit: { type: 'integer', minimum: 1, maximum: 100_000 },
  navigation_timeout_ms: { type: 'integer', minimum: 1000, maximum: 300_000 },
  capture_timeout_ms: { type: 'integer', minimum: 1000, maximum: 300_000 },
  retention_days: { type: 'integer', minimum: 1, maximum: 3650 },
  full_page_max_height: { type: 'integer', minimum: 1000, maximum: 100_000 },
  egress_allow: { type: 'array', items: { type: 'string' }, description: 'CIDR ranges allowed although denied by default, as the admin saved them' },
  egress_allow_command_line: {
    type: 'array',
    items: { type: 'string' },
    readOnly: true,
    description: 'Ranges allowed at start by --egress-allow or SCREENSHOT_EGRESS_ALLOW; never saved. An update may send them back unchanged, never different',
  },
  egress_deny_lan: { type: 'boolean', description: 'Deny RFC 1918 and fc00::/7 targets too' },
  public_base_url: { type: ['string', 'null'], description: 'Base of absolute addresses in responses; null: from the Host header' },
};

const API_KEY = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'account_id', 'name', 'prefix', 'ip_whitelist', 'created_at', 'last_used_at', 'revoked'],
  properties: {
    id: { type: 'string' },
    account_id: { type: 'string' },
    name: { type: 'string', minLength: 1, maxLength: 100 },
    prefix: { type: 'string', description: 'The first characters of the key, to recognise it' },
    ip_whitelist: { type: 'array', items: { type: 'string' }, description: 'Addresses and CIDR ranges; empty allows all' },
    created_at: ISO_SECONDS,
    last_used_at: { oneOf: [ISO_SECONDS, { type: 'null' }] },
    revoked: { type: 'boolean' },
  } as Record<string, JsonSchema>,
};

/**
 * The OpenAPI 3.1 document of the admin API, served at GET /admin/api/openapi.json behind
 * the admin authentication. `baseUrl` is the origin the admin reaches the service at.
 */
export function adminOpenApiDocument(baseUrl: string): Record<string, unknown> {
  const variants = jobVariants({
    properties: {
      account_id: { type: 'string' },
      email: { type: ['string', 'null'], description: "The account's e-mail; null once the account is deleted" },
      device: { type: 'string', enum: ['desktop', 'tablet', 'mobile'] },
      format: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
      callback_url: { type: ['string', 'null'] },
      duration_ms: { type: ['integer', 'null'], minimum: 0 },
      blocked_requests: count('Sub-requests the egress guard refused'),
      expired: { type: 'boolean' },
    },
    required: ['account_id', 'email', 'device', 'format', 'callback_url', 'duration_ms', 'blocked_requests', 'expired'],
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Screenshot Appliance admin API',
      version: '1.0.0',
      description:
        'Accounts, API keys, job history, usage, settings and the queue, for the control panel and scripts. Reachable from ' +
        'the addresses in SCREENSHOT_ADMIN_ALLOW only (loopback by default). Authenticate with `Authorization: Bearer ' +
        '<token>` (the token is in `<data>/admin-token`), or with the session cookie from POST /session; with the ' +
        `cookie, state-changing requests also need \`${CSRF_HEADER}: ${CSRF_VALUE}\`. Errors are \`{error, message}\`.`,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: `${baseUrl}/admin/api` }],
    security: [{ AdminToken: [] }, { AdminSession: [] }],
    paths: {
      '/session': {
        post: {
          operationId: 'openSession',
          summary: 'Exchange the admin token for the session cookie',
          security: [],
          requestBody: body({ type: 'object', required: ['token'], properties: { token: { type: 'string' } } }),
          responses: {
            '204': { description: `Sets the HttpOnly, SameSite=Strict cookie ${SESSION_COOKIE}` },
            '400': ref('responses', 'BadRequest'),
            '401': ref('responses', 'Unauthorized'),
            '403': ref('responses', 'Forbidden'),
          },
        },
        delete: {
          operationId: 'closeSession',
          summary: 'Clear the session cookie',
          security: [],
          responses: { ...noContent, '403': ref('responses', 'Forbidden') },
        },
      },
      '/status': {
        get: { operationId: 'getStatus', summary: 'Queue, browser and captures per hour', responses: { ...ok('The state', schema('Status')), ...ERRORS } },
      },
      '/queue/pause': {
        post: { operationId: 'pauseQueue', summary: 'Stop starting captures', responses: { ...ok('The queue', schema('QueueStats')), ...ERRORS } },
      },
      '/queue/resume': {
        post: { operationId: 'resumeQueue', summary: 'Start captures again', responses: { ...ok('The queue', schema('QueueStats')), ...ERRORS } },
      },
      '/accounts': {
        get: {
          operationId: 'listAccounts',
          summary: 'Every account, oldest first',
          responses: { ...ok('The accounts', { type: 'object', additionalProperties: false, required: ['accounts'], properties: { accounts: { type: 'array', items: schema('Account') } } }), ...ERRORS },
        },
        post: {
          operationId: 'createAccount',
          summary: 'Create an account',
          requestBody: body(schema('AccountCreate')),
          responses: { '201': { description: 'Created', content: json(schema('Account')) }, ...ERRORS },
        },
      },
      '/accounts/{id}': {
        parameters: [idParam('Account id')],
        get: { operationId: 'getAccount', summary: 'One account', responses: { ...ok('The account', schema('Account')), ...ERRORS_404 } },
        patch: {
          operationId: 'updateAccount',
          summary: 'Change an account',
          requestBody: body(schema('AccountUpdate')),
          responses: { ...ok('The account', schema('Account')), ...ERRORS_404 },
        },
        delete: { operationId: 'deleteAccount', summary: 'Delete an account and revoke its keys', responses: { ...noContent, ...ERRORS_404 } },
      },
      '/accounts/{id}/webhook-secret': {
        parameters: [idParam('Account id')],
        get: { operationId: 'getWebhookSecret', summary: 'The webhook signing secret', responses: { ...ok('The secret', schema('WebhookSecret')), ...ERRORS_404 } },
        post: {
          operationId: 'rotateWebhookSecret',
          summary: 'Rotate the webhook signing secret (the old one keeps signing for 24 h)',
          responses: { ...ok('The new secret', schema('WebhookSecret')), ...ERRORS_404 },
        },
      },
      '/accounts/{id}/keys': {
        parameters: [idParam('Account id')],
        get: {
          operationId: 'listKeys',
          summary: "The account's API keys",
          responses: { ...ok('The keys', { type: 'object', additionalProperties: false, required: ['keys'], properties: { keys: { type: 'array', items: schema('ApiKey') } } }), ...ERRORS_404 },
        },
        post: {
          operationId: 'createKey',
          summary: 'Create an API key; the key is in the answer this once',
          requestBody: body(schema('ApiKeyCreate')),
          responses: { '201': { description: 'Created', content: json(schema('ApiKeyCreated')) }, ...ERRORS_404 },
        },
      },
      '/keys/{id}': {
        parameters: [idParam('API key id')],
        get: { operationId: 'getKey', summary: 'One API key', responses: { ...ok('The key', schema('ApiKey')), ...ERRORS_404 } },
        patch: {
          operationId: 'updateKey',
          summary: 'Rename, change the whitelist or revoke',
          requestBody: body(schema('ApiKeyUpdate')),
          responses: { ...ok('The key', schema('ApiKey')), ...ERRORS_404 },
        },
        delete: { operationId: 'deleteKey', summary: 'Delete an API key', responses: { ...noContent, ...ERRORS_404 } },
      },
      '/jobs': {
        get: {
          operationId: 'listJobs',
          summary: 'Job history, newest first',
          parameters: [
            { name: 'status', in: 'query', schema: JOB_STATUS },
            { name: 'account_id', in: 'query', schema: { type: 'string' } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
            { name: 'before', in: 'query', schema: { type: 'string' }, description: 'next_before of the previous page' },
          ],
          responses: {
            ...ok('A page of jobs', {
              type: 'object',
              additionalProperties: false,
              required: ['jobs', 'next_before'],
              properties: { jobs: { type: 'array', items: schema('AdminJob') }, next_before: { type: ['string', 'null'] } },
            }),
            ...ERRORS,
          },
        },
      },
      '/jobs/{id}': {
        parameters: [idParam('Job id')],
        get: { operationId: 'getJob', summary: 'One job', responses: { ...ok('The job', schema('AdminJob')), ...ERRORS_404 } },
      },
      '/jobs/{id}/source': {
        parameters: [idParam('Job id')],
        get: {
          operationId: 'getJobSource',
          summary: "The captured page's HTML, as plain text",
          responses: { '200': { description: 'The HTML', content: { 'text/plain': { schema: { type: 'string' } } } }, ...ERRORS_404 },
        },
      },
      '/usage': {
        get: {
          operationId: 'getUsageByDay',
          summary: 'Calls per day, in total and per account (or for one account)',
          parameters: [
            { name: 'account_id', in: 'query', schema: { type: 'string' } },
            { name: 'days', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 366, default: 30 } },
          ],
          responses: { ...ok('Calls per day', schema('UsageByDay')), ...ERRORS_404 },
        },
      },
      '/settings': {
        get: { operationId: 'getSettings', summary: 'The live settings', responses: { ...ok('The settings', schema('Settings')), ...ERRORS } },
        put: {
          operationId: 'updateSettings',
          summary: 'Change some settings; the others keep their values',
          requestBody: body(schema('SettingsUpdate')),
          responses: { ...ok('The settings', schema('Settings')), ...ERRORS },
        },
      },
      '/webhooks': {
        get: {
          operationId: 'listWebhookDeliveries',
          summary: 'Webhook deliveries with their attempts, newest first',
          parameters: [
            { name: 'job_id', in: 'query', schema: { type: 'string' } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
          ],
          responses: {
            ...ok('The deliveries', {
              type: 'object',
              additionalProperties: false,
              required: ['deliveries'],
              properties: { deliveries: { type: 'array', items: schema('WebhookDelivery') } },
            }),
            ...ERRORS,
          },
        },
      },
      '/webhooks/{id}/redeliver': {
        parameters: [idParam('Delivery id (also the webhook-id header)')],
        post: {
          operationId: 'redeliverWebhook',
          summary: 'Send a delivery again now, with the same webhook-id',
          responses: { ...ok('The delivery', schema('WebhookDelivery')), ...ERRORS_404 },
        },
      },
      '/openapi.json': {
        get: { operationId: 'getAdminOpenApiDocument', summary: 'This document', responses: { ...ok('The OpenAPI 3.1 document', { type: 'object' }), ...ERRORS } },
      },
    },
    components: {
      securitySchemes: {
        AdminToken: { type: 'http', scheme: 'bearer', description: 'The token in <data>/admin-token' },
        AdminSession: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'From POST /session' },
      },
      responses: {
        BadRequest: { description: 'Invalid input; the message names the field', content: json(schema('Error')) },
        Unauthorized: { description: 'No or wrong admin token or session', content: json(schema('Error')) },
        Forbidden: {
          description: 'From an address outside SCREENSHOT_ADMIN_ALLOW, or a cookie-authenticated change without the CSRF header',
          content: json(schema('Error')),
        },
        NotFound: { description: 'No such account, key or job', content: json(schema('Error')) },
        InternalError: { description: 'A fault of the service; the message never carries internals', content: json(schema('Error')) },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        Account: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'email', 'email_verified', 'plan', 'daily_limit', 'monthly_limit', 'created_at', 'calls_today', 'calls_this_month'],
          properties: {
            id: { type: 'string' },
            ...ACCOUNT_FIELDS,
            created_at: ISO_SECONDS,
            calls_today: count('Calls made today (UTC)'),
            calls_this_month: count('Calls made this month (UTC)'),
          },
        },
        AccountCreate: { type: 'object', additionalProperties: false, required: ['email'], properties: ACCOUNT_FIELDS },
        AccountUpdate: { type: 'object', additionalProperties: false, properties: ACCOUNT_FIELDS },
        WebhookSecret: {
          type: 'object',
          additionalProperties: false,
          required: ['secret'],
          properties: { secret: { type: 'string', pattern: '^whsec_' } },
        },
        ApiKey: API_KEY,
        ApiKeyCreate: {
          type: 'object',
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100, default: 'API key' },
            ip_whitelist: { type: 'array', items: { type: 'string' }, default: [] },
          },
        },
        ApiKeyCreated: {
          ...API_KEY,
          required: [...API_KEY.required, 'key'],
          properties: { ...API_KEY.properties, key: { type: 'string', pattern: '^sa_[A-Za-z0-9_-]{43}$', description: 'Shown this once' } },
        },
        ApiKeyUpdate: {
          type: 'object',
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            ip_whitelist: { type: 'array', items: { type: 'string' } },
            revoked: { type: 'boolean', description: 'true revokes; a revoked key cannot be restored' },
          },
        },
        AdminJob: jobOneOf('AdminJob'),
        AdminJobPending: variants.pending,
        AdminJobProcessing: variants.processing,
        AdminJobCompleted: variants.completed,
        AdminJobFailed: variants.failed,
        UsageByDay: {
          type: 'object',
          additionalProperties: false,
          required: ['days', 'accounts'],
          properties: {
            days: schema('DayCounts'),
            accounts: {
              type: 'array',
              description: 'Empty when account_id is given',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['account_id', 'email', 'days'],
                properties: { account_id: { type: 'string' }, email: { type: 'string' }, days: schema('DayCounts') },
              },
            },
          },
        },
        DayCounts: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['date', 'count'],
            properties: { date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, count: count('Calls that day') },
          },
        },
        Settings: { type: 'object', additionalProperties: false, required: Object.keys(SETTINGS_FIELDS), properties: SETTINGS_FIELDS },
        SettingsUpdate: { type: 'object', additionalProperties: false, properties: SETTINGS_FIELDS },
        QueueStats: QUEUE_STATS,
        WebhookDelivery: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'job_id', 'account_id', 'url', 'type', 'status', 'attempts', 'next_attempt_at', 'created_at', 'completed_at'],
          properties: {
            id: { type: 'string', description: 'Also the webhook-id header, the same on every attempt' },
            job_id: { type: 'string' },
            account_id: { type: 'string' },
            url: { type: 'string' },
            type: { type: 'string', enum: ['screenshot.completed', 'screenshot.failed'] },
            status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
            attempts: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['at', 'status_code', 'error', 'duration_ms', 'manual'],
                properties: {
                  at: ISO_SECONDS,
                  status_code: { type: ['integer', 'null'], description: "The receiver's status; null when none came" },
                  error: { type: ['string', 'null'] },
                  duration_ms: { type: 'integer', minimum: 0 },
                  manual: { type: 'boolean', description: 'Asked for by the admin; does not use up the schedule' },
                },
              },
            },
            next_attempt_at: { oneOf: [ISO_SECONDS, { type: 'null' }] },
            created_at: ISO_SECONDS,
            completed_at: { oneOf: [ISO_SECONDS, { type: 'null' }] },
          },
        },
        Status: {
          type: 'object',
          additionalProperties: false,
          required: ['queue', 'engine', 'captures_per_hour', 'api_base_url'],
          properties: {
            queue: schema('QueueStats'),
            engine: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'version', 'ready', 'browsers', 'browsers_ready'],
              properties: {
                name: { type: 'string' },
                version: { type: ['string', 'null'] },
                ready: { type: 'boolean', description: 'True while any browser is up and taking captures' },
                browsers: { type: 'integer', minimum: 1, description: 'Browser processes the captures are shared among (--browsers)' },
                browsers_ready: { type: 'integer', minimum: 0, description: 'Of those, how many are up now' },
              },
            },
            captures_per_hour: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['hour', 'completed', 'failed'],
                properties: { hour: ISO_SECONDS, completed: count('Jobs completed that hour'), failed: count('Jobs failed that hour') },
              },
            },
            api_base_url: { type: 'string', format: 'uri' },
          },
        },
      },
    },
  };
}
