import type { LoginType } from '../../contract/logins.js';

/**
 * A saved login as the stores keep it: what it is and how its last sign-in went, in clear. Its
 * user name, password and session are sealed apart (LoginStore.secrets), never in this record.
 */
export interface LoginRecord {
  /** `login_…` */
  _id: string;
  account_id: string;
  name: string;
  type: LoginType;
  /** The origin it signs in to (form: the login page's; basic: the site's; storage_state: the first cookie's or origin's). */
  site: string;
  /** form: the sign-in page. */
  login_url?: string;
  username_selector?: string;
  password_selector?: string;
  submit_selector?: string;
  success_selector?: string;
  success_url?: string;
  state: 'new' | 'signed_in' | 'failed';
  /** Epoch milliseconds of the last sign-in that worked; null before the first. */
  signed_in_at: number | null;
  /** Why the last sign-in failed; null when it worked. */
  last_error: string | null;
  /** Epoch milliseconds. */
  created_at: number;
  /**
   * Counts the sessions kept so far: a capture refused with session N asks for a new one only
   * if N is still the one kept, so jobs refused together sign in once.
   */
  session_version: number;
  /**
   * The sign-in under way for session_version + 1, when one is: which service (a cluster node, or
   * the one process) holds it, and until when (epoch milliseconds) before another may take over.
   * Absent or null when none is.
   */
  signing_in?: { by: string; until: number } | null;
}
