import http from 'node:http';
import https from 'node:https';

import type { NetworkScope } from '../egress/network-scope.js';
import type { EgressPolicy } from '../egress/policy.js';
import type { Logger } from '../logger.js';
import type { ChatUrls, MonitorRecord } from '../store/records/monitor-record.js';
import { sendWebhook } from '../webhooks/sender.js';
import type { MonitorEvent } from './monitor-event.js';

// A monitor's notifications in the shapes Slack's and Microsoft Teams' incoming webhooks take:
// the text change first (what a person reads), then the numbers and the links. Each is one POST
// through the egress policy, pinned to the address it vetted, as a webhook is.

/** Time one notification may take, from DNS to the response head. */
const CHAT_TIMEOUT_MS = 10_000;
/** Lines of a text change shown in a chat message at most, added and removed each. */
const CHAT_LINES = 10;

const headline = (event: MonitorEvent) => {
  const name = event.data.name ?? event.data.url;
  if (event.type === 'monitor.changed') return `${name} changed`;
  if (event.type === 'monitor.inconclusive') return `${name}: a check could not be trusted (${event.data.inconclusive_codes.join(', ')})`;
  return `${name}: checks are failing`;
};

/** The lines a message says, text change first: `+ added`, `- removed`, then what the pixels say. */
export function messageLines(event: MonitorEvent): string[] {
  const { text_change, pixels_only, difference, error } = event.data;
  const lines: string[] = [];
  if (text_change) {
    lines.push(...text_change.added.slice(0, CHAT_LINES).map((line) => `+ ${line}`));
    lines.push(...text_change.removed.slice(0, CHAT_LINES).map((line) => `- ${line}`));
  }
  if (pixels_only) lines.push('Only pixels changed: the text is the same (an image, a colour, a layout shift).');
  if (difference !== null) lines.push(`${(difference * 100).toFixed(2)} % of the pixels differ (threshold ${(event.data.threshold * 100).toFixed(2)} %).`);
  if (error) lines.push(error);
  return lines;
}

/** Slack's incoming-webhook message: `text` (also the notification's fallback) and Block Kit blocks. */
export function slackPayload(event: MonitorEvent): Record<string, unknown> {
  const title = headline(event);
  const lines = messageLines(event);
  const links = [
    event.data.diff_url && `<${event.data.diff_url}|Diff>`,
    event.data.screenshot_url && `<${event.data.screenshot_url}|Screenshot>`,
    event.data.baseline_screenshot_url && `<${event.data.baseline_screenshot_url}|Baseline>`,
  ].filter(Boolean);
  return {
    text: `${title}\n${lines.join('\n')}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } },
      ...(lines.length ? [{ type: 'section', text: { type: 'mrkdwn', text: '```' + lines.join('\n').slice(0, 2900) + '```' } }] : []),
      ...(links.length ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `${links.join(' · ')} · ${event.data.url}` }] }] : []),
    ],
  };
}

/** A Teams message with one Adaptive Card, the shape Teams' incoming webhooks and its Workflows take. */
export function teamsPayload(event: MonitorEvent): Record<string, unknown> {
  const links = [
    ['Diff', event.data.diff_url],
    ['Screenshot', event.data.screenshot_url],
    ['Baseline', event.data.baseline_screenshot_url],
  ].filter((link): link is [string, string] => typeof link[1] === 'string');
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: headline(event), weight: 'Bolder', size: 'Medium', wrap: true },
            ...messageLines(event).map((line) => ({ type: 'TextBlock', text: line, wrap: true, fontType: 'Monospace', spacing: 'None' })),
            { type: 'TextBlock', text: event.data.url, isSubtle: true, wrap: true },
          ],
          actions: links.map(([title, url]) => ({ type: 'Action.OpenUrl', title, url })),
        },
      },
    ],
  };
}

export interface ChatNotifierDeps {
  policy: EgressPolicy;
  /** The network scope of the monitor's key, as for its webhooks. */
  scopeOf: (monitor: MonitorRecord) => Promise<NetworkScope>;
  /** Authorities receivers' certificates may come from. @default Node's roots */
  ca?: string[];
  log: Logger;
}

/**
 * Sends a monitor's event to its Slack and Teams URLs: one attempt each (a chat message late
 * by hours says nothing; the signed webhook is the event that is retried), its outcome logged.
 */
export class ChatNotifier {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly deps: ChatNotifierDeps) {
    this.agents = { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false, ...(deps.ca ? { ca: deps.ca } : {}) }) };
  }

  /** Sends `event` to `urls`, the monitor's Slack and Teams URLs opened from their seal. */
  async send(monitor: MonitorRecord, urls: ChatUrls, event: MonitorEvent): Promise<void> {
    const targets = [
      ['slack', urls.slack_url, slackPayload],
      ['teams', urls.teams_url, teamsPayload],
    ] as const;
    const scope = await this.deps.scopeOf(monitor);
    await Promise.all(
      targets.map(async ([kind, url, payload]) => {
        if (!url) return;
        const outcome = await sendWebhook(
          { url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload(event)) },
          { policy: this.deps.policy, scope, timeoutMs: CHAT_TIMEOUT_MS, agents: this.agents },
        );
        if (outcome.verdict !== 'success') this.deps.log.warn({ monitor_id: monitor._id, kind, error: outcome.error }, `could not send the ${kind} notification`);
      }),
    );
  }
}
