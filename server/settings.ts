import type { Config } from './config.js';
import { type Settings, SettingsUpdate } from './contract/admin.js';
import { httpUrl } from './contract/http-url.js';
import { validateBody } from './contract/validate.js';
import { ValidationError } from './domain-errors.js';
import { canonicalEntry } from './ip-whitelist.js';
import type { SettingsStore } from './store/stores.js';

export type { Settings };

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

  constructor(
    private readonly store: SettingsStore,
    private readonly base: Settings,
  ) {
    this.current = base;
  }

  async load(): Promise<void> {
    const values = await this.store.load();
    if (!values) return;
    try {
      const valid = validatePatch(values, this.base);
      if (valid.egress_allow) {
        // Earlier versions saved the command line's ranges with the admin's; they are the command line's.
        valid.egress_allow = valid.egress_allow.filter((entry) => !this.base.egress_allow_command_line.includes(entry));
      }
      this.saved = valid;
      this.current = { ...this.base, ...valid };
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
    const saved = { ...this.saved, ...valid };
    await this.store.save(saved);
    this.saved = saved;
    this.current = { ...this.current, ...valid };
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }

  onChange(listener: (s: Settings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
