
import { RateLimitedError } from '../domain-errors.js';
import { SerialByKey } from '../serial-by-key.js';
import type { UsageStore } from '../store/stores.js';
import { type Clock,nextUtcMidnight, nextUtcMonthStart, utcDay, utcMonth } from '../time.js';

export interface QuotaAccount {
  _id: string;
  daily_limit: number;
  monthly_limit: number;
}

export interface UsageCounts {
  today: number;
  month: number;
}

/** Calls given back that the store could not take yet (a full disk). */
interface Refund {
  accountId: string;
  day: string;
  calls: number;
}

/**
 * Daily and monthly call counters per account, one per account and UTC day. Each admission is
 * one step of the store (UsageStore.admit), so concurrent requests at the limit, on this node
 * or on others sharing the store, can never over-admit; a refused request is never counted,
 * nor is one whose work failed.
 */
export class QuotaService {
  /** One account's admissions and refunds take turns, so no refund is written twice. */
  private readonly turns = new SerialByKey();
  /** Refunds not yet stored, by `account day`; counts subtract them until they are. */
  private readonly refunds = new Map<string, Refund>();

  constructor(
    private readonly store: UsageStore,
    private readonly clock: Clock,
  ) {}

  async usage(accountId: string): Promise<UsageCounts> {
    const now = this.clock.now();
    const docs = await this.store.month(accountId, utcMonth(now));
    const today = utcDay(now);
    const counted = (d: { day: string; count: number }) => d.count - (this.refunds.get(`${accountId} ${d.day}`)?.calls ?? 0);
    return {
      today: docs.filter((d) => d.day === today).reduce((sum, d) => sum + counted(d), 0),
      month: docs.reduce((sum, d) => sum + counted(d), 0),
    };
  }

  /**
   * Counts `calls` for the account while `work` runs, and gives them back when `work` fails:
   * a request whose jobs could not be stored (a full disk) is not counted.
   */
  async chargeFor<T>(account: QuotaAccount, calls: number, work: () => Promise<T>): Promise<T> {
    const { day } = await this.countCalls(account, calls);
    try {
      return await work();
    } catch (err) {
      await this.refund({ accountId: account._id, day, calls });
      throw err;
    }
  }

  /** Counts `calls` for the account, or throws RateLimitedError when that would pass a limit. */
  async reserve(account: QuotaAccount, calls: number): Promise<UsageCounts> {
    const { today, month } = await this.countCalls(account, calls);
    return { today, month };
  }

  private countCalls(account: QuotaAccount, calls: number): Promise<UsageCounts & { day: string }> {
    return this.turns.run(account._id, async () => {
      await this.storeRefunds(account._id);
      const now = this.clock.now();
      const at = { day: utcDay(now), month: utcMonth(now) };
      // Refunds the store has not taken yet (a full disk) still count as given back.
      const owed = this.owed(account._id, at);
      const stored = await this.store.admit(account._id, at, calls, {
        daily: account.daily_limit + owed.today,
        monthly: account.monthly_limit + owed.month,
      });
      const used = { today: stored.today - owed.today, month: stored.month - owed.month };
      if (used.today + calls > account.daily_limit) {
        const wait = Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000));
        throw new RateLimitedError(
          `Daily limit of ${account.daily_limit} requests per day exceeded` +
            (calls > 1 ? ` (this request needs ${calls} calls, ${Math.max(0, account.daily_limit - used.today)} remain today)` : '') +
            '. The limit resets at 00:00 UTC.',
          wait,
        );
      }
      if (used.month + calls > account.monthly_limit) {
        const wait = Math.max(1, Math.ceil((nextUtcMonthStart(now) - now) / 1000));
        throw new RateLimitedError(
          `Monthly limit of ${account.monthly_limit} requests per month exceeded. The limit resets on the 1st at 00:00 UTC.`,
          wait,
        );
      }
      return { today: used.today + calls, month: used.month + calls, day: at.day };
    });
  }

  /** Calls given back to the account but not stored yet, today and this month. */
  private owed(accountId: string, at: { day: string; month: string }): UsageCounts {
    let today = 0;
    let month = 0;
    for (const refund of this.refunds.values()) {
      if (refund.accountId !== accountId || !refund.day.startsWith(at.month)) continue;
      month += refund.calls;
      if (refund.day === at.day) today += refund.calls;
    }
    return { today, month };
  }

  /** Takes calls back; when the store refuses, the refund is kept in memory and stored later. */
  private async refund(refund: Refund): Promise<void> {
    const key = `${refund.accountId} ${refund.day}`;
    const owed = this.refunds.get(key);
    this.refunds.set(key, { ...refund, calls: refund.calls + (owed?.calls ?? 0) });
    await this.turns.run(refund.accountId, () => this.storeRefunds(refund.accountId));
  }

  /** Runs only inside the account's serialised chain, so no refund is written twice. */
  private async storeRefunds(accountId: string): Promise<void> {
    for (const [key, refund] of this.refunds) {
      if (refund.accountId !== accountId) continue;
      try {
        await this.store.add(accountId, { day: refund.day, month: refund.day.slice(0, 7) }, -refund.calls);
      } catch {
        return;
      }
      // Another refund may have joined this one while it was written.
      const left = (this.refunds.get(key)?.calls ?? refund.calls) - refund.calls;
      if (left > 0) this.refunds.set(key, { ...refund, calls: left });
      else this.refunds.delete(key);
    }
  }

  /** Per-day counts for the last `days` days, oldest first, for one account or all. */
  async daily(accountId: string | undefined, days: number): Promise<Array<{ date: string; count: number }>> {
    const now = this.clock.now();
    const dates = Array.from({ length: days }, (_, i) => utcDay(now - (days - 1 - i) * 86_400_000));
    const docs = await this.store.since(accountId, dates[0]);
    const byDay = new Map<string, number>();
    for (const d of docs) byDay.set(d.day, (byDay.get(d.day) ?? 0) + d.count);
    return dates.map((date) => ({ date, count: byDay.get(date) ?? 0 }));
  }

  /** The X-RateLimit-* headers for an identified account. */
  async headers(account: QuotaAccount): Promise<Record<string, string>> {
    const { today } = await this.usage(account._id);
    return {
      'X-RateLimit-Limit': String(account.daily_limit),
      'X-RateLimit-Remaining': String(Math.max(0, account.daily_limit - today)),
      'X-RateLimit-Reset': String(Math.floor(nextUtcMidnight(this.clock.now()) / 1000)),
    };
  }
}
