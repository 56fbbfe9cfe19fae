import type { Config } from './config.js';
import { type Settings, SettingsUpdate } from './contract/admin.js';
import { httpUrl } from './contract/http-url.js';
import { validateBody } from './contract/validate.js';
import type { SecretBox } from './crypto/secret-box.js';
import { ValidationError } from './domain-errors.js';
import { canonicalEntry } from './ip-whitelist.js';
import type { SettingsStore } from './store/stores.js';

export type { Settings };

/** Where the SMTP password is kept in the saved values: sealed, beside the settings and never in them. */
const SEALED_SMTP_PASSWORD = 'smtp_password_sealed';

export function settingsFromConfig(config: Config): Settings {
  return {
    concurrency: config.concurrency,
    queue_limit: config.queueLimit,
    account_queue_share: config.accountQueueShare,
    navigation_timeout_ms: config.navigationTimeoutMs,
    capture_timeout_ms: config.captureTimeoutMs,
    retention_days: config.retentionDays,
    history_days: config.historyDays,
    full_page_max_height: config.fullPageMaxHeight,
    egress_allow: [],
    egress_allow_command_line: config.egressAllow.map(canonicalEntry),
    egress_deny_lan: config.egressDenyLan,
    public_base_url: config.publicBaseUrl ?? null,
  };
}

/** Every range the egress guard allows: the command line's and the admin's. */
export function allowedRanges(settings: Readonly<Settings>): string[] {
  return [...new Set([...settings.egress_allow_command_line, ...settings.egress_allow])];
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((entry, i) => entry === b[i]);

/**
 * The values of a settings change, checked against the SettingsUpdate schema and then for
 * what a schema cannot say: ranges that parse, a base URL that is one, and the command
 * line's ranges left as they are.
 */
function validatePatch(patch: unknown, current: Readonly<Settings>): Partial<Settings> {
  const valid = validateBody(SettingsUpdate, patch);
  const { egress_allow_command_line: fixed, ...out } = valid;
  // A client that sends back what it read changes nothing; only a different list is an error.
  if (fixed !== undefined && !sameList(fixed, current.egress_allow_command_line)) {
    throw new ValidationError(
      'egress_allow_command_line is set at start (--egress-allow or SCREENSHOT_EGRESS_ALLOW) and cannot be changed here; use egress_allow',
      'egress_allow_command_line',
    );
  }
  if (out.egress_allow) {
    out.egress_allow = out.egress_allow.map((entry) => {
      try {
        return canonicalEntry(entry);
      } catch {
        throw new ValidationError(`egress_allow entry ${JSON.stringify(entry)} is not an IP address or CIDR range`, 'egress_allow');
      }
    });
  }
  if (out.public_base_url !== undefined) out.public_base_url = baseUrl(out.public_base_url);
  return out;
}

/**
 * `public_base_url` as stored: an http(s) origin and path, normalised, without credentials (it is
 * in every link the appliance answers) or a trailing slash; or null.
 */
function baseUrl(value: string | null): string | null {
  if (value === null || value === '') return null;
  return httpUrl('public_base_url', value).replace(/\/+$/, '');
}

/**
 * The live settings: the configuration's values, overridden by what the admin saved. Only
 * what the admin saved is stored, so a value given at start (a command-line range) never
 * becomes permanent by a save of something else. Listeners apply a change (queue
 * concurrency, egress policy) as soon as it is saved.
 */
export class SettingsService {
  private current: Settings;
  /** The admin's own values, as stored. */
  private saved: Partial<Settings> = {};
  private readonly listeners = new Set<(s: Settings) => void>();
  /** The SMTP password, sealed; null when none is saved. */
  private sealedPassword: string | null = null;
  private box: SecretBox | null = null;

  constructor(
    private readonly store: SettingsStore,
    private readonly base: Settings,
  ) {
    this.current = base;
  }

  /** The box the SMTP password is sealed with: opened after the settings (a cluster's key is in the stores). */
  sealWith(box: SecretBox): void {
    this.box = box;
  }

  /** The SMTP password, or null when none is saved (or it cannot be opened). */
  smtpPassword(): string | null {
    if (!this.sealedPassword || !this.box) return null;
    try {
      return this.box.open<string>(this.sealedPassword);
    } catch {
      return null;
    }
  }

  async load(): Promise<void> {
    const stored = await this.store.load();
    if (!stored) return;
    const { [SEALED_SMTP_PASSWORD]: sealed, ...values } = stored as Partial<Settings> & { [SEALED_SMTP_PASSWORD]?: string | null };
    this.sealedPassword = sealed ?? null;
    try {
      const valid = validatePatch(values, this.base);
      if (valid.egress_allow) {
        // Earlier versions saved the command line's ranges with the admin's; they are the command line's.
        valid.egress_allow = valid.egress_allow.filter((entry) => !this.base.egress_allow_command_line.includes(entry));
      }
      this.saved = valid;
      this.current = this.shown({ ...this.base, ...valid });
    } catch {
      // A saved value from an older version that no longer validates keeps the default.
    }
  }

  get(): Readonly<Settings> {
    return this.current;
  }

  /**
   * Reads the saved settings again and tells the listeners when they changed: in cluster mode
   * another node's panel may have saved them.
   */
  async refresh(): Promise<void> {
    const before = JSON.stringify(this.current);
    await this.load();
    if (JSON.stringify(this.current) === before) return;
    for (const listener of this.listeners) listener(this.current);
  }

  async update(patch: unknown): Promise<Settings> {
    // What another node saved meanwhile is kept: this change goes on top of the stored values.
    await this.load();
    const valid = validatePatch(patch, this.current);
    let sealedPassword = this.sealedPassword;
    if (valid.smtp === null) sealedPassword = null;
    else if (valid.smtp) {
      const { password, has_password: _shown, ...smtp } = valid.smtp;
      if (password !== undefined) {
        if (!this.box) throw new ValidationError('the SMTP password cannot be saved before the secrets are open', 'smtp.password');
        sealedPassword = password === '' ? null : this.box.seal(password);
      }
      valid.smtp = smtp;
    }
    const saved = { ...this.saved, ...valid };
    await this.store.save({ ...saved, [SEALED_SMTP_PASSWORD]: sealedPassword } as Partial<Settings>);
    this.saved = saved;
    this.sealedPassword = sealedPassword;
    this.current = this.shown({ ...this.current, ...valid });
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }

  /** The settings as read back: the SMTP server without its password, saying whether one is saved. */
  private shown(settings: Settings): Settings {
    if (!settings.smtp) return settings;
    const { password: _never, ...smtp } = settings.smtp;
    return { ...settings, smtp: { ...smtp, has_password: this.sealedPassword !== null } };
  }

  onChange(listener: (s: Settings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
