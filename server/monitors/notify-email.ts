import nodemailer from 'nodemailer';

import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import type { MonitorRecord } from '../store/records/monitor-record.js';
import type { MonitorEvent } from './monitor-event.js';
import { messageLines } from './notify-chat.js';

/** Time allowed to connect, to greet and between two SMTP replies. */
const SMTP_TIMEOUT_MS = 15_000;

/** What a monitor's e-mail attaches besides its text. */
export interface EmailAttachments {
  /** The diff picture (PNG), when the check has one. */
  diff: Buffer | null;
}

const subjectOf = (event: MonitorEvent) => {
  const name = event.data.name ?? event.data.url;
  if (event.type === 'monitor.changed') return `Changed: ${name}`;
  if (event.type === 'monitor.inconclusive') return `Could not be checked: ${name}`;
  return `Failing: ${name}`;
};

/** The e-mail's plain text: the text change first, then the numbers, the regions and the links. */
export function emailText(event: MonitorEvent): string {
  const { data } = event;
  const regions = data.regions.map((r) => {
    const rect = r.after ?? r.before!;
    return `  ${r.kind} at x ${rect.x}, y ${rect.y}, ${rect.width} × ${rect.height} px`;
  });
  return [
    subjectOf(event),
    '',
    ...messageLines(event),
    ...(regions.length ? ['', 'Where the picture changed:', ...regions] : []),
    '',
    `Page: ${data.url}`,
    ...(data.screenshot_url ? [`Screenshot: ${data.screenshot_url}`] : []),
    ...(data.baseline_screenshot_url ? [`Baseline: ${data.baseline_screenshot_url}`] : []),
    ...(data.diff_url ? [`Diff: ${data.diff_url}`] : []),
    '',
  ].join('\n');
}

export interface EmailNotifierDeps {
  /** The admin's SMTP server (settings `smtp`) and its sealed password. */
  settings: SettingsService;
  log: Logger;
}

/**
 * Mails a monitor's events to its `notify.email` addresses through the SMTP server of the admin
 * settings (nodemailer): the text change in the body, the regions as JSON and the diff picture
 * attached. One attempt, bounded by SMTP_TIMEOUT_MS per step; a failure is logged. Nothing is
 * sent while no SMTP server is set.
 */
export class EmailNotifier {
  constructor(private readonly deps: EmailNotifierDeps) {}

  async send(monitor: MonitorRecord, event: MonitorEvent, attachments: EmailAttachments): Promise<void> {
    const to = monitor.notify?.email ?? [];
    const smtp = this.deps.settings.get().smtp;
    if (to.length === 0) return;
    if (!smtp) {
      this.deps.log.warn({ monitor_id: monitor._id }, 'a monitor e-mail was not sent: no SMTP server is set (settings smtp)');
      return;
    }
    const password = this.deps.settings.smtpPassword();
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.username ? { auth: { user: smtp.username, pass: password ?? '' } } : {}),
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    });
    try {
      await transport.sendMail({
        from: smtp.from,
        to,
        subject: subjectOf(event),
        text: emailText(event),
        attachments: [
          ...(attachments.diff ? [{ filename: 'diff.png', content: attachments.diff, contentType: 'image/png' }] : []),
          ...(event.data.regions.length ? [{ filename: 'regions.json', content: JSON.stringify(event.data.regions, null, 2), contentType: 'application/json' }] : []),
        ],
      });
    } catch (err) {
      this.deps.log.warn({ monitor_id: monitor._id, err: (err as Error).message }, 'could not send a monitor e-mail');
    } finally {
      transport.close();
    }
  }
}
