import { ValidationError } from './errors.js';
import type { Config } from './config.js';
import { canonicalEntry } from './auth/ip-whitelist.js';
import type { Store } from './store/datastores.js';
import type { Settings } from './settings-shape.js';

export type { Settings };

const INTEGER_BOUNDS: Record<string, [number, number]> = {
  concurrency: [1, 64],
  queue_limit: [1, 100_000],
  navigation_timeout_ms: [1000, 300_000],
  capture_timeout_ms: [1000, 300_000],
  retention_days: [1, 3650],
  full_page_max_height: [1000, 100_000],
};

export function settingsFromConfig(config: Config): Settings {
  return {
    concurrency: config.concurrency,
    queue_limit: config.queueLimit,
    navigation_timeout_ms: config.navigationTimeoutMs,
    capture_timeout_ms: config.captureTimeoutMs,
    retention_days: config.retentionDays,
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

const sameList = (a: unknown, b: readonly string[]) =>
  Array.isArray(a) && a.length === b.length && a.every((entry, i) => entry === b[i]);

function validatePatch(patch: Record<string, unknown>, current: Readonly<Settings>): Partial<Settings> {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) throw new ValidationError('settings must be an object');
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (Object.hasOwn(INTEGER_BOUNDS, field)) {
      const [min, max] = INTEGER_BOUNDS[field];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw new ValidationError(`${field} must be a whole number from ${min} to ${max}`);
      }
      out[field] = value;
    } else if (field === 'egress_allow') {
      if (!Array.isArray(value)) throw new ValidationError('egress_allow must be an array of CIDR ranges');
      out[field] = value.map((entry) => {
        try {
          return canonicalEntry(entry);
        } catch {
          throw new ValidationError(`egress_allow entry ${JSON.stringify(entry)} is not an IP address or CIDR range`);
        }
      });
    } else if (field === 'egress_allow_command_line') {
      // A client that sends back what it read changes nothing; only a different list is an error.
      if (!sameList(value, current.egress_allow_command_line)) {
        throw new ValidationError('egress_allow_command_line is set at start (--egress-allow or SCREENSHOT_EGRESS_ALLOW) and cannot be changed here; use egress_allow');
      }
    } else if (field === 'egress_deny_lan') {
      if (typeof value !== 'boolean') throw new ValidationError('egress_deny_lan must be true or false');
      out[field] = value;
    } else if (field === 'public_base_url') {
      if (value === null || value === '') {
        out[field] = null;
        continue;
      }
      let url: URL | undefined;
      try {
        url = new URL(String(value));
      } catch {
        // reported below
      }
      if (typeof value !== 'string' || !url || !/^https?:$/.test(url.protocol)) {
        throw new ValidationError('public_base_url must be an http:// or https:// address, or null');
      }
      out[field] = value.replace(/\/+$/, '');
    } else {
      throw new ValidationError(`Unknown setting: ${field}`);
    }
  }
  return out as Partial<Settings>;
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
    private readonly store: Store,
    private readonly base: Settings,
  ) {
    this.current = base;
  }

  async load(): Promise<void> {
    const doc = await this.store.findOne({ _id: 'settings' });
    if (!doc) return;
    const { _id, ...values } = doc;
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

  async update(patch: Record<string, unknown>): Promise<Settings> {
    const valid = validatePatch(patch, this.current);
    const saved = { ...this.saved, ...valid };
    await this.store.update({ _id: 'settings' }, { _id: 'settings', ...saved }, { upsert: true });
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
