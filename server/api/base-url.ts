import type { Context } from 'koa';

import type { SettingsService } from '../settings.js';

/** The absolute origin clients see: the configured public base URL, else the request's own. */
export function baseUrlOf(ctx: Context, settings: SettingsService): string {
  return settings.get().public_base_url ?? `${ctx.protocol}://${ctx.host}`;
}
