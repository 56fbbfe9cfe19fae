import {
  AccountCreate,
  AccountUpdate,
  ADMIN_SCHEMAS,
  ApiKeyCreate,
  ApiKeyUpdate,
  JobsQuery,
  SessionOpen,
  SettingsUpdate,
  UsageQuery,
  WebhooksQuery,
} from '../../contract/admin.js';
import { LOGIN_SCHEMAS, LoginCreate, LoginPatch } from '../../contract/logins.js';
import { StorageDestinationPut } from '../../contract/storage.js';
import { ScreenshotRequest } from '../../contract/v1.js';
import { CSRF_HEADER, CSRF_VALUE, SESSION_COOKIE } from '../admin-auth.js';
import { MAX_RENDER_TIMEOUT_SECONDS, SECRET_OPTIONS } from '../render-link.js';
import { ADMIN_BATCH_SCHEMAS, adminBatchPaths } from './admin-batches.js';
import { ADMIN_MONITOR_SCHEMAS, adminMonitorPaths } from './admin-monitors.js';
import { componentSchemas, jobOneOf, type JsonSchema,plain, queryParameters } from './components.js';

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

/** A render link's options: the body of POST /v1/screenshot but its secret options, and the link's own expires and render_timeout. */
function renderLinkRequest(): JsonSchema {
  const request = plain(ScreenshotRequest) as { properties: Record<string, JsonSchema> };
  const options = Object.entries(request.properties).filter(([name]) => !(SECRET_OPTIONS as readonly string[]).includes(name));
  return {
    ...request,
    properties: {
      ...Object.fromEntries(options),
      expires: { type: 'integer', minimum: 1, description: 'Unix time (seconds) after which the link answers 403' },
      render_timeout: { type: 'integer', minimum: 1, maximum: MAX_RENDER_TIMEOUT_SECONDS, description: 'Seconds the link waits for its capture before answering 202' },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the admin API, served at GET /admin/api/openapi.json behind
 * the admin authentication. `baseUrl` is the origin the admin reaches the service at.
 */
export function adminOpenApiDocument(baseUrl: string): Record<string, unknown> {
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
      ...adminMonitorPaths({ json, ref, errors: ERRORS, errors404: ERRORS_404 }),
      ...adminBatchPaths({ json, ref, errors: ERRORS, errors404: ERRORS_404 }),
      '/session': {
        post: {
          operationId: 'openSession',
          summary: 'Exchange the admin token for the session cookie',
          security: [],
          requestBody: body(plain(SessionOpen)),
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
          requestBody: body(plain(AccountCreate)),
          responses: { '201': { description: 'Created', content: json(schema('Account')) }, ...ERRORS },
        },
      },
      '/accounts/{id}': {
        parameters: [idParam('Account id')],
        get: { operationId: 'getAccount', summary: 'One account', responses: { ...ok('The account', schema('Account')), ...ERRORS_404 } },
        patch: {
          operationId: 'updateAccount',
          summary: 'Change an account',
          requestBody: body(plain(AccountUpdate)),
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
      '/accounts/{id}/storage': {
        parameters: [idParam('Account id')],
        get: {
          operationId: 'getStorageDestination',
          summary: "The account's storage destination, without its secret (the access key id masked)",
          responses: { ...ok('The destination', schema('StorageDestination')), ...ERRORS_404 },
        },
        put: {
          operationId: 'setStorageDestination',
          summary: "Set the account's storage destination (its own S3-compatible bucket), replacing any; the credentials are sealed and never shown again",
          requestBody: body(plain(StorageDestinationPut)),
          responses: { ...ok('The destination, without its secret', schema('StorageDestination')), ...ERRORS_404 },
        },
        delete: {
          operationId: 'deleteStorageDestination',
          summary: "Remove the account's storage destination (404 when it has none)",
          responses: { ...noContent, ...ERRORS_404 },
        },
      },
      '/accounts/{id}/logins': {
        parameters: [idParam('Account id')],
        get: {
          operationId: 'listAccountLogins',
          summary: "The account's saved logins: name, type, site and state, never a credential or a session",
          responses: { ...ok('The logins', schema('LoginList')), ...ERRORS_404 },
        },
        post: {
          operationId: 'createAccountLogin',
          summary: 'Save a login for the account, as POST /v1/logins does; the password or session is sealed and never shown again',
          requestBody: body(plain(LoginCreate)),
          responses: { '201': { description: 'Created', content: json(schema('Login')) }, ...ERRORS_404 },
        },
      },
      '/logins/{id}': {
        parameters: [idParam('Login id (login_…)')],
        patch: {
          operationId: 'updateLogin',
          summary: "Change any account's login, as PATCH /v1/logins/{id} does; new credentials drop the session kept, so the next capture signs in afresh",
          requestBody: body(plain(LoginPatch)),
          responses: { ...ok('The login as changed', schema('Login')), ...ERRORS_404 },
        },
        delete: { operationId: 'deleteLogin', summary: 'Remove a saved login and erase its session', responses: { ...noContent, ...ERRORS_404 } },
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
          requestBody: body(plain(ApiKeyCreate)),
          responses: { '201': { description: 'Created', content: json(schema('ApiKeyCreated')) }, ...ERRORS_404 },
        },
      },
      '/keys/{id}': {
        parameters: [idParam('API key id')],
        get: { operationId: 'getKey', summary: 'One API key', responses: { ...ok('The key', schema('ApiKey')), ...ERRORS_404 } },
        patch: {
          operationId: 'updateKey',
          summary: 'Rename, change the whitelist or revoke',
          requestBody: body(plain(ApiKeyUpdate)),
          responses: { ...ok('The key', schema('ApiKey')), ...ERRORS_404 },
        },
        delete: { operationId: 'deleteKey', summary: 'Delete an API key', responses: { ...noContent, ...ERRORS_404 } },
      },
      '/keys/{id}/signing-secret': {
        parameters: [idParam('API key id')],
        post: {
          operationId: 'rotateSigningSecret',
          summary: "Replace the key's render-link signing secret; links signed with the old one answer 403 from now on",
          responses: { ...ok('The new secret, shown this once', schema('SigningSecret')), ...ERRORS_404 },
        },
      },
      '/keys/{id}/render-link': {
        parameters: [idParam('API key id')],
        post: {
          operationId: 'createRenderLink',
          summary: 'A render link for these options (the body of POST /v1/screenshot), signed with the key\'s secret',
          requestBody: body(renderLinkRequest()),
          responses: { ...ok('The link', schema('RenderLink')), ...ERRORS_404 },
        },
      },
      '/jobs': {
        get: {
          operationId: 'listJobs',
          summary: 'Job history, newest first',
          parameters: queryParameters(JobsQuery),
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
      '/jobs/{id}/markdown': {
        parameters: [idParam('Job id')],
        get: {
          operationId: 'getJobMarkdown',
          summary: "The page's main content as Markdown (extract: markdown), as plain text",
          responses: { '200': { description: 'The Markdown', content: { 'text/plain': { schema: { type: 'string' } } } }, ...ERRORS_404 },
        },
      },
      '/usage': {
        get: {
          operationId: 'getUsageByDay',
          summary: 'Calls per day, in total and per account (or for one account)',
          parameters: queryParameters(UsageQuery),
          responses: { ...ok('Calls per day', schema('UsageByDay')), ...ERRORS_404 },
        },
      },
      '/settings': {
        get: { operationId: 'getSettings', summary: 'The live settings', responses: { ...ok('The settings', schema('Settings')), ...ERRORS } },
        put: {
          operationId: 'updateSettings',
          summary: 'Change some settings; the others keep their values',
          requestBody: body(plain(SettingsUpdate)),
          responses: { ...ok('The settings', schema('Settings')), ...ERRORS },
        },
      },
      '/webhooks': {
        get: {
          operationId: 'listWebhookDeliveries',
          summary: 'Webhook deliveries with their attempts, newest first',
          parameters: queryParameters(WebhooksQuery),
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
        ...componentSchemas({ ...ADMIN_SCHEMAS, ...ADMIN_MONITOR_SCHEMAS, ...LOGIN_SCHEMAS, ...ADMIN_BATCH_SCHEMAS }),
        AdminJob: jobOneOf('AdminJob'),
      },
    },
  };
}
