import type { Context, Next } from 'koa';

import type { AccountService } from '../auth/accounts.js';
import type { ApiKeyService } from '../auth/api-keys.js';
import { clientAddress } from '../auth/client-address.js';
import { RateLimitedError } from '../domain-errors.js';
import { isAllowed } from '../ip-whitelist.js';
import type { QuotaService } from '../limits/quota.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { AccountRecord } from '../store/records/account-record.js';
import type { KeyRecord } from '../store/records/key-record.js';
import { ApiError } from './error-responses.js';

export interface V1State {
  account: AccountRecord;
  key: KeyRecord;
  clientIp: string;
}

export interface V1AuthDeps {
  accounts: AccountService;
  keys: ApiKeyService;
  quota: QuotaService;
  rateLimiter: RateLimiter;
  trustProxy: readonly string[];
}

/**
 * The requests-per-second budget a request spends: the limiter, the name it counts under there,
 * and what a refusal says. A key's requests spend their account's; a render link has its own.
 */
export interface RateBudget {
  limiter: RateLimiter;
  id: string;
  refusal: string;
}

/** The requests-per-second budget of an account: what a key's requests spend. */
export function accountBudget(deps: Pick<V1AuthDeps, 'rateLimiter'>, account: AccountRecord): RateBudget {
  return {
    limiter: deps.rateLimiter,
    id: account._id,
    refusal: `Too many requests: the limit is ${deps.rateLimiter.limit} requests per second per account`,
  };
}

/**
 * Who a request is: its key and the key's account, or it is refused (401, or 403 for a bad
 * render-link signature); and the budget it spends when not the account's.
 */
export type Identify = (ctx: Context) => Promise<{ key: KeyRecord; account: AccountRecord; budget?: RateBudget }>;

/** The key in the X-API-Key header. */
function apiKeyHeader(deps: V1AuthDeps): Identify {
  return async (ctx) => {
    const presented = ctx.get('X-API-Key').trim();
    if (!presented) throw new ApiError(401, 'Missing API key: send it in the X-API-Key header');
    const key = await deps.keys.authenticate(presented);
    const account = key ? await deps.accounts.find(key.account_id) : null;
    if (!key || !account) throw new ApiError(401, 'Invalid API key');
    return { key, account };
  };
}

/**
 * The v1 access chain, in the documented order: key (401) → IP whitelist (403) → e-mail
 * verified (403) → plan (403) → requests per second (429, the account's or the identified budget). The key comes from X-API-Key, or
 * from `identify` (a render link's signed key_id). Once a key is identified, every response
 * carries the X-RateLimit-* headers, errors included.
 */
export function v1Auth(deps: V1AuthDeps, identify: Identify = apiKeyHeader(deps)) {
  return async (ctx: Context, next: Next) => {
    const { key, account, budget } = await identify(ctx);

    try {
      const ip = clientAddress(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, deps.trustProxy);
      if (!isAllowed(key.ip_whitelist, ip)) {
        throw new ApiError(403, `Requests from IP address ${ip} are not allowed for this API key`, 'IP not allowed');
      }
      if (!account.email_verified) {
        throw new ApiError(
          403,
          'The e-mail address of this account is not verified; verify it before using the API',
          'Email not verified',
        );
      }
      if (account.plan !== 'super_user') {
        throw new ApiError(403, 'The API is available only on the Super User plan', 'Access denied');
      }
      const spent = budget ?? accountBudget(deps, account);
      const wait = spent.limiter.take(spent.id);
      if (wait > 0) throw new RateLimitedError(spent.refusal, wait);
      void deps.keys.touch(key).catch(() => undefined);
      ctx.state.v1 = { account, key, clientIp: ip } satisfies V1State;
      await next();
    } finally {
      ctx.set(await deps.quota.headers(account));
    }
  };
}
