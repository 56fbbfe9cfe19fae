import { CaptureError } from './capture-errors.js';

// A saved login as a capture takes it: what to send or apply before navigation, or how to sign
// in on the capture's own page. The service decides which (logins/login-service.ts); the
// pipeline only applies it (options/saved-login.ts).

/**
 * A browser session as Playwright's `storageState()` writes it: cookies, and localStorage per
 * origin (the contract's StorageState is its schema).
 */
export interface StorageState {
  cookies: Array<{
    name: string;
    value: string;
    domain: string;
    path?: string;
    /** Unix seconds; -1 or absent: a session cookie. */
    expires?: number;
    httpOnly?: boolean;
    secure?: boolean;
    sameSite?: 'Strict' | 'Lax' | 'None';
  }>;
  origins?: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>;
}

/** A form to sign in with, and how to tell it worked. */
export interface SignInForm {
  loginUrl: string;
  username: string;
  password: string;
  /** Found on the page when absent (signInScript). */
  usernameSelector?: string;
  passwordSelector?: string;
  submitSelector?: string;
  /** An element present only when signed in. */
  successSelector?: string;
  /** An address (or its beginning) the app lands on once signed in. */
  successUrl?: string;
}

/** The login a capture runs with. */
export interface CaptureLogin {
  /** The login's name, for messages. */
  name: string;
  /** HTTP Basic credentials, sent to this origin only. */
  basic?: { origin: string; username: string; password: string };
  /** Cookies and localStorage applied before navigation; null when the capture signs in first (`signIn`). */
  session: StorageState | null;
  /** A form login: checked after the picture (a page that is a sign-in form means the session was refused). */
  form?: SignInForm;
  /**
   * An imported session (storage_state): it cannot be renewed, so a capture that lands on a
   * sign-in page with it says so here (the login then fails the next jobs at once, until a new
   * session is imported) and the job fails with `message`.
   */
  imported?: { refused(message: string): Promise<void> };
  /** Set when the capture must sign in first: it is told the session it got, or why it failed. */
  signIn?: {
    signedIn(state: StorageState): Promise<void>;
    /** `refused`: the site refused the credentials (no more tries until they change); else a failure on the way (tried again). */
    failed(message: string, refused: boolean): Promise<void>;
  };
}

/** A capture with a saved form login landed on a sign-in page: the session it was given was refused. */
export class SessionRefusedError extends CaptureError {
  constructor(readonly login: string) {
    super(`The session of the login "${login}" was refused: the page asks to sign in`);
  }
}

/** Signing in with a saved form login did not get past the sign-in page; the message says what the page said. */
export class SignInFailedError extends CaptureError {}
