import { Monitor, MonitorCheckList, MonitorChecksQuery, MonitorList, MonitorRequest, MonitorRun, MonitorUpdate } from '../../contract/monitors.js';
import { type JsonSchema, plain, queryParameters } from './components.js';

/** What the admin document shares with this part of it. */
export interface AdminDocumentParts {
  json: (schema: JsonSchema) => Record<string, unknown>;
  ref: (kind: string, name: string) => Record<string, unknown>;
  errors: Record<string, unknown>;
  errors404: Record<string, unknown>;
}

/** The admin's monitor schemas, as components. */
export const ADMIN_MONITOR_SCHEMAS = { Monitor, MonitorList, MonitorCheckList, MonitorRun };

/** The /monitors paths of the admin document: every account's monitors, as /v1/monitors shows an account its own. */
export function adminMonitorPaths({ json, ref, errors, errors404 }: AdminDocumentParts): Record<string, unknown> {
  const ok = (description: string, name: string, status = '200') => ({ [status]: { description, content: json(ref('schemas', name)) } });
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The monitor id (mon_…)' };
  const request = plain(MonitorRequest) as { properties: Record<string, JsonSchema>; required?: string[] };
  const create = {
    ...request,
    properties: { account_id: { type: 'string', description: "The account whose monitor it is; its checks are jobs of the account's oldest key not revoked" }, ...request.properties },
    required: ['account_id', ...(request.required ?? [])],
  };
  return {
    '/monitors': {
      get: { operationId: 'adminListMonitors', summary: "Every account's monitors, oldest first", responses: { ...ok('The monitors', 'MonitorList'), ...errors } },
      post: {
        operationId: 'adminCreateMonitor',
       
        summary: 'Create a monitor for an account (as POST /v1/monitors, with account_id)',
        requestBody: { required: true, content: json(create) },
        responses: { ...ok('The monitor', 'Monitor', '201'), ...errors404 },
      },
    },
    '/monitors/{id}': {
      patch: {
        operationId: 'adminUpdateMonitor',
       
        summary: 'Change a monitor (as PATCH /v1/monitors/{id})',
        parameters: [id],
        requestBody: { required: true, content: json(plain(MonitorUpdate)) },
        responses: { ...ok('The monitor as changed', 'Monitor'), ...errors404 },
      },
      delete: { operationId: 'adminDeleteMonitor', summary: 'Remove a monitor and its checks', parameters: [id], responses: { '204': { description: 'Removed' }, ...errors404 } },
    },
    '/monitors/{id}/run': {
      post: {
        operationId: 'adminRunMonitor',
       
        summary: 'Run a check now (counted against the account\'s limits)',
        parameters: [id],
        responses: {
          ...ok("The check's job was queued", 'MonitorRun', '201'),
          '429': { description: "The account's daily or monthly limit is reached", content: json(ref('schemas', 'Error')) },
          '503': { description: 'The capture queue is full', content: json(ref('schemas', 'Error')) },
          ...errors404,
        },
      },
    },
    '/monitors/{id}/proposed-masks/accept': {
      post: {
        operationId: 'adminAcceptProposedMasks',
        summary: 'Accept the masks proposed from the first baseline (as POST /v1/monitors/{id}/proposed-masks/accept)',
        parameters: [id],
        responses: { ...ok('The monitor', 'Monitor'), ...errors404 },
      },
    },
    '/monitors/{id}/proposed-masks/reject': {
      post: {
        operationId: 'adminRejectProposedMasks',
        summary: 'Reject the masks proposed from the first baseline (as POST /v1/monitors/{id}/proposed-masks/reject)',
        parameters: [id],
        responses: { ...ok('The monitor', 'Monitor'), ...errors404 },
      },
    },
    '/monitors/{id}/checks': {
      get: {
        operationId: 'adminListMonitorChecks',
       
        summary: "A monitor's checks, newest first",
        parameters: [id, ...queryParameters(MonitorChecksQuery)],
        responses: { ...ok('A page of checks', 'MonitorCheckList'), ...errors404 },
      },
    },
  };
}
