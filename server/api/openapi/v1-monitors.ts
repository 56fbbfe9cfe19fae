import { Type } from 'typebox';

import { MonitorChecksQuery, MonitorEventData, MonitorRequest, MonitorUpdate } from '../../contract/monitors.js';
import { FILE_NAME_PATTERN } from '../../contract/v1.js';
import { type JsonSchema, plain, queryParameters } from './components.js';

/** What the v1 document shares with this part of it. */
export interface V1DocumentParts {
  json: (schema: JsonSchema) => Record<string, unknown>;
  ref: (kind: string, name: string) => Record<string, unknown>;
  rateHeaders: Record<string, unknown>;
  authErrors: Record<string, unknown>;
  keyedError: (description: string) => Record<string, unknown>;
}

/** What a monitor's callback_url receives. */
export const MonitorEvent = Type.Object(
  {
    type: Type.Enum(['monitor.changed', 'monitor.inconclusive', 'monitor.failed']),
    timestamp: Type.String({ format: 'date-time', description: 'When the check ended, ISO 8601 in UTC' }),
    data: MonitorEventData,
  },
  { additionalProperties: false },
);

const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The monitor id (mon_…)' };

/** The /monitors paths and GET /files/{name}/diff of the v1 document. */
export function monitorPaths({ json, ref, rateHeaders, authErrors, keyedError }: V1DocumentParts): Record<string, unknown> {
  const ok = (description: string, schema: string) => ({ description, headers: rateHeaders, content: json(ref('schemas', schema)) });
  const notFound = keyedError('No such monitor, or a monitor of another account');
  const badRequest = keyedError('A field is invalid; message names it');
  const tags = ['monitors'];
  return {
    '/monitors': {
      post: {
        operationId: 'createMonitor',
        tags,
        summary: 'Create a monitor: a screenshot request on a schedule, each check compared with the one before',
        description:
          'Takes every field of POST /screenshot but `cache_ttl` (checks are always fresh), with a `schedule` and the comparison\'s ' +
          'settings. Each check is an ordinary job per device (it counts as a call, has a status URL, and expires with retention); a ' +
          'scheduled check the limits refuse is recorded as `skipped` with the reason.',
        requestBody: { required: true, content: json(plain(MonitorRequest)) },
        responses: { '201': ok('The monitor', 'Monitor'), '400': badRequest, '413': keyedError('The body is too large'), ...authErrors },
      },
      get: {
        operationId: 'listMonitors',
        tags,
        summary: "The key's account's monitors, oldest first",
        responses: { '200': ok('The monitors', 'MonitorList'), ...authErrors },
      },
    },
    '/monitors/{id}': {
      get: { operationId: 'getMonitor', tags, summary: 'A monitor', parameters: [id], responses: { '200': ok('The monitor', 'Monitor'), '404': notFound, ...authErrors } },
      patch: {
        operationId: 'updateMonitor',
        tags,
        summary: 'Change a monitor',
        description: 'Fields given replace the monitor\'s (`url` and `html` replace each other); a new schedule, or a resume, counts from now.',
        parameters: [id],
        requestBody: { required: true, content: json(plain(MonitorUpdate)) },
        responses: { '200': ok('The monitor as changed', 'Monitor'), '400': badRequest, '404': notFound, ...authErrors },
      },
      delete: {
        operationId: 'deleteMonitor',
        tags,
        summary: 'Remove a monitor, its checks and their diff pictures (the jobs stay until retention)',
        parameters: [id],
        responses: { '204': { description: 'Removed', headers: rateHeaders }, '404': notFound, ...authErrors },
      },
    },
    '/monitors/{id}/run': {
      post: {
        operationId: 'runMonitor',
        tags,
        summary: 'Run a check now (a paused monitor too); returns its (first) job',
        parameters: [id],
        responses: {
          '201': ok('The check\'s job was queued', 'MonitorRun'),
          '404': notFound,
          '503': {
            description: 'The capture queue is full, or the account already has its share of it',
            headers: { ...rateHeaders, 'Retry-After': ref('headers', 'RetryAfter') },
            content: json(ref('schemas', 'Error')),
          },
          ...authErrors,
        },
      },
    },
    '/monitors/{id}/checks': {
      get: {
        operationId: 'listMonitorChecks',
        tags,
        summary: "A monitor's checks, newest first",
        parameters: [id, ...queryParameters(MonitorChecksQuery)],
        responses: { '200': ok('A page of checks', 'MonitorCheckList'), '400': badRequest, '404': notFound, ...authErrors },
      },
    },
    '/monitors/{id}/checks/{job_id}/pin': {
      post: {
        operationId: 'pinMonitorCheck',
        tags,
        summary: 'Pin a completed check as the baseline every later check is compared with (sets baseline: pinned)',
        parameters: [id, { name: 'job_id', in: 'path', required: true, schema: { type: 'string' }, description: "The check's job_id" }],
        responses: { '200': ok('The monitor', 'Monitor'), '400': badRequest, '404': keyedError('No such monitor or check'), ...authErrors },
      },
    },
    '/monitors/{id}/proposed-masks/accept': {
      post: {
        operationId: 'acceptProposedMasks',
        tags,
        summary: "Accept the masks proposed when the monitor took its first baseline: they join its mask_rects, and proposed_masks is emptied",
        parameters: [id],
        responses: { '200': ok('The monitor', 'Monitor'), '404': notFound, ...authErrors },
      },
    },
    '/monitors/{id}/proposed-masks/reject': {
      post: {
        operationId: 'rejectProposedMasks',
        tags,
        summary: 'Reject the proposed masks: proposed_masks is emptied, mask_rects stay as they are',
        parameters: [id],
        responses: { '200': ok('The monitor', 'Monitor'), '404': notFound, ...authErrors },
      },
    },
    '/files/{name}/diff': {
      get: {
        operationId: 'getMonitorDiff',
        tags,
        summary: "A check's diff picture: the changed pixels in red over a faded copy of its screenshot",
        description: "Under the screenshot's own capability name (its diff_url); no key needed. 404 when no pixel differed, or after retention.",
        security: [],
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: FILE_NAME_PATTERN } }],
        responses: {
          '200': { description: 'The diff picture', content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } } },
          '404': { description: 'No diff picture under this name', content: json(ref('schemas', 'Error')) },
          '429': { description: 'Too many image requests from this address', content: json(ref('schemas', 'RateLimitError')) },
        },
      },
    },
  };
}

/** The webhooks of monitors, for the document's `webhooks`. */
export function monitorWebhooks({ json, ref }: V1DocumentParts): Record<string, unknown> {
  return {
    monitorEvent: {
      post: {
        operationId: 'monitorEvent',
        summary: 'A check found a change (monitor.changed), a check\'s picture could not be trusted (monitor.inconclusive, once per run of them), or checks started failing (monitor.failed, once per run of failures)',
        description: "POSTed to the monitor's `callback_url`, signed as the screenshot webhooks are.",
        parameters: [
          { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
          { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string', pattern: '^v1,' } },
        ],
        requestBody: { required: true, content: json(ref('schemas', 'MonitorEvent')) },
        responses: { '2XX': { description: 'Delivered' }, '410': { description: 'Gone: no further attempts for this delivery' } },
      },
    },
  };
}
