import type { Plan } from './admin-types.js';

export interface PlanInfo {
  label: string;
  /** Whether the account's keys may call the v1 API; the server's key check has the last word. */
  apiAccess: boolean;
}

/** Every plan the admin API knows, so a new plan in the schema does not type-check until it is described here. */
export const PLANS: Record<Plan, PlanInfo> = {
  super_user: { label: 'Super User', apiAccess: true },
  basic: { label: 'Basic', apiAccess: false },
};

/** Why the keys of an account on a plan without API access do not work, as the API answers them. */
export function noApiAccessReason(plan: Plan): string {
  return `${PLANS[plan].label}: the API refuses this account’s keys with 403 “Access denied”.`;
}
