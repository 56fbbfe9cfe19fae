import crypto from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import type { CaptureLogin, SignInForm, StorageState } from '../capture/capture-login.js';
import { CaptureError } from '../capture/engine.js';
import { httpUrl } from '../contract/http-url.js';
import { LOGIN_FIELDS_BY_TYPE, LoginCreate, type LoginPatch, LoginPatch as LoginPatchSchema, type LoginView } from '../contract/logins.js';
import { validateBody } from '../contract/validate.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { NotFoundError, ValidationError } from '../domain-errors.js';
import type { Logger } from '../logger.js';
import type { LoginRecord } from '../store/records/login-record.js';
import type { LoginStore } from '../store/stores.js';
import { type Clock, formatIsoSeconds } from '../time.js';
import { LoginLocks } from './login-locks.js';

/** What a login keeps sealed: its credentials, and the session its last sign-in got (or the one imported). */
export interface LoginSecrets {
  username?: string;
  password?: string;
  session?: StorageState;
}

export interface LoginServiceDeps {
  store: LoginStore;
  /** Seals the credentials and sessions (the key that seals job secrets). */
  secrets: SecretBox;
  clock: Clock;
  log: Logger;
}

const newLoginId = () => `login_${crypto.randomBytes(12).toString('hex')}`;

/** Longest text of a page kept as a login's last error. */
const LAST_ERROR_MAX_CHARS = 300;

/** How often a capture waiting for another node's sign-in looks at the login again. */
const SIGN_IN_POLL_MS = 250;

/** How a capture asks for its login (LoginService.forCapture). */
export interface CaptureTake {
  /** The session_version a capture was just refused with: a new session is needed. */
  refused?: number;
  /** How long a sign-in this capture starts may hold the login against other nodes: the capture's own bound. */
  holdMs: number;
  /** The job's: ends a wait for another node's sign-in. */
  signal?: AbortSignal;
}

/**
 * The accounts' saved logins: kept with their secrets sealed, shown without them, and handed to
 * captures. A form login signs in once and keeps the session it got; a capture refused with
 * that session asks for another, and of the captures refused together, one signs in (one lock per
 * login, held from the moment a capture is told to sign in until it says how it went).
 */
export class LoginService {
  private readonly locks = new LoginLocks();
  /** Names this service's sign-ins in the store, apart from other nodes'. */
  private readonly holder = `${os.hostname()}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;

  constructor(private readonly deps: LoginServiceDeps) {}

  async create(accountId: string, body: unknown): Promise<LoginRecord> {
    const input = validateBody(LoginCreate, body);
    const missing = LOGIN_FIELDS_BY_TYPE[input.type].find((field) => input[field as keyof LoginCreate] === undefined);
    if (missing) throw new ValidationError(`${missing} is required for a ${input.type} login`, missing);
    const record: LoginRecord = {
      _id: newLoginId(),
      account_id: accountId,
      name: input.name,
      type: input.type,
      site: '',
      state: input.type === 'form' ? 'new' : 'signed_in',
      signed_in_at: input.type === 'form' ? null : this.deps.clock.now(),
      last_error: null,
      created_at: this.deps.clock.now(),
      session_version: 0,
    };
    const secrets: LoginSecrets = {};
    applyFields(record, secrets, input);
    await this.deps.store.insert(record, this.deps.secrets.seal(secrets));
    return record;
  }

  list(accountId: string): Promise<LoginRecord[]> {
    return this.deps.store.list(accountId);
  }

  /** The account's login; NotFoundError for none, or another account's. */
  async get(accountId: string, id: string): Promise<LoginRecord> {
    const login = await this.deps.store.get(id);
    if (!login || login.account_id !== accountId) throw new NotFoundError('login', id);
    return login;
  }

  /** Changes fields; new credentials or a new session drop the session kept, so the next capture signs in afresh. */
  async update(accountId: string, id: string, body: unknown): Promise<LoginRecord> {
    const login = await this.get(accountId, id);
    const input = validateBody(LoginPatchSchema, body);
    const allowed = new Set(['name', ...LOGIN_FIELDS_BY_TYPE[login.type], ...(login.type === 'form' ? FORM_OPTIONAL : [])]);
    const foreign = Object.keys(input).find((field) => !allowed.has(field));
    if (foreign) throw new ValidationError(`${foreign} does not apply to a ${login.type} login`, foreign);
    return this.locks.run(id, async () => {
      const secrets = await this.openSecrets(login);
      const record = { ...login };
      applyFields(record, secrets, input);
      const newSecrets = input.username !== undefined || input.password !== undefined || input.storage_state !== undefined;
      if (newSecrets && login.type === 'form') {
        delete secrets.session;
        Object.assign(record, { state: 'new', signed_in_at: null, last_error: null });
      }
      if (input.storage_state !== undefined) Object.assign(record, { state: 'signed_in', signed_in_at: this.deps.clock.now(), last_error: null });
      const { _id, account_id: _account, ...change } = record;
      const updated = await this.deps.store.update(id, change, newSecrets ? this.deps.secrets.seal(secrets) : undefined);
      if (!updated) throw new NotFoundError('login', id);
      return updated;
    });
  }

  /** The admin's change of any account's login, as `update`; NotFoundError for none. */
  async updateAny(id: string, body: unknown): Promise<LoginRecord> {
    const login = await this.deps.store.get(id);
    if (!login) throw new NotFoundError('login', id);
    return this.update(login.account_id, id, body);
  }

  /** Removes the login and erases its session; NotFoundError for none, or another account's. */
  async remove(accountId: string, id: string): Promise<void> {
    await this.get(accountId, id);
    if (!(await this.deps.store.remove(id))) throw new NotFoundError('login', id);
  }

  /** The admin's removal of any account's login; NotFoundError for none. */
  async removeAny(id: string): Promise<void> {
    if (!(await this.deps.store.remove(id))) throw new NotFoundError('login', id);
  }

  /** Removes the logins of an account being deleted, and their sessions. */
  async forget(accountId: string): Promise<void> {
    for (const login of await this.deps.store.list(accountId)) await this.deps.store.remove(login._id);
  }

  /** A request naming a login: refused (400 naming `login`) unless the account has it. */
  async requireFor(accountId: string, id: string): Promise<void> {
    const login = await this.deps.store.get(id);
    if (!login || login.account_id !== accountId) throw new ValidationError(`login ${id} is not a login of this account (see GET /v1/logins)`, 'login');
  }

  /** A request body that may name a login (a monitor's): refused as requireFor refuses, when it names one. */
  async requireIfNamed(accountId: string, body: unknown): Promise<void> {
    const login = (body as { login?: unknown } | null)?.login;
    if (typeof login === 'string') await this.requireFor(accountId, login);
  }

  /**
   * The login as a capture takes it. A form login with a session kept gives that session, unless
   * it is the one a capture was just refused with (`refused`, its session_version): then, as
   * when none is kept, the capture is told to sign in, and this login's lock is held until it says
   * how that went (`signIn`) or `done` is called, so captures waiting meanwhile get its session.
   * Across the nodes of a cluster the sign-in is claimed in the store for `holdMs` (the capture's
   * own bound): a capture finding it claimed elsewhere waits for the session it brings, or for the
   * claim to lapse, or for `signal`.
   */
  async forCapture(accountId: string, id: string, take: CaptureTake): Promise<{ login: CaptureLogin; version: number; done: () => void }> {
    const release = await this.locks.acquire(id);
    let held = true;
    const done = () => {
      if (held) release();
      held = false;
    };
    try {
      for (;;) {
        const login = await this.deps.store.get(id);
        if (!login || login.account_id !== accountId) throw new CaptureError(`The login ${id} no longer exists`);
        const secrets = await this.openSecrets(login);
        if (login.type !== 'form') {
          const given = this.withoutSignIn(login, secrets);
          done();
          return { login: given, version: 0, done };
        }
        const form = formOf(login, secrets);
        if (secrets.session && login.session_version !== take.refused) {
          done();
          return { login: { name: login.name, session: secrets.session, form }, version: login.session_version, done };
        }
        const claimed = await this.claimSignIn(login, secrets, take.holdMs, done);
        if (claimed) return { login: { name: login.name, session: null, form, signIn: claimed.outcome }, version: login.session_version + 1, done: claimed.ended };
        await this.signedInElsewhere(id, login.session_version, take.signal);
      }
    } catch (err) {
      done();
      throw err;
    }
  }

  /** A basic login's credentials, or an imported session, as a capture takes them: there is nothing to sign in with. */
  private withoutSignIn(login: LoginRecord, secrets: LoginSecrets): CaptureLogin {
    const name = login.name;
    if (login.type === 'basic') return { name, session: null, basic: { origin: login.site, username: secrets.username!, password: secrets.password! } };
    // An imported session a site refused would only be refused again, after a whole capture each time.
    if (login.state === 'failed') {
      throw new CaptureError(
        `The login "${name}" is not used again: ${login.last_error ?? 'its imported session was refused'}; import a fresh session with PATCH /v1/logins/${login._id}`,
      );
    }
    return { name, session: secrets.session ?? null, imported: { refused: (message: string) => this.refusedImport(login._id, message) } };
  }

  /**
   * Claims the sign-in of a form login's next session for this service: null when another node
   * holds it. The capture told to sign in says how it went (`outcome`, which frees the claim and
   * releases the login's lock through `done`); one that ends without saying (`ended`: a crash, a
   * time-out) frees the claim for the other nodes at once.
   */
  private async claimSignIn(login: LoginRecord, secrets: LoginSecrets, holdMs: number, done: () => void) {
    // Credentials the site refused are not tried again by every job (an app may lock the user out after a few): only once changed.
    if (login.state === 'failed') {
      throw new CaptureError(
        `The login "${login.name}" is not tried again: its last sign-in failed (${login.last_error ?? 'no reason given'}); give its credentials again with PATCH /v1/logins/${login._id}`,
      );
    }
    const now = this.deps.clock.now();
    if (!(await this.deps.store.claimSignIn(login._id, login.session_version, { by: this.holder, until: now + holdMs }, now))) return null;
    let told = false;
    let over = false;
    const outcome = this.signInOutcome(login._id, secrets, login.session_version + 1, () => {
      told = true;
      done();
    });
    const ended = () => {
      if (!told && !over) this.deps.store.update(login._id, { signing_in: null }).catch(() => undefined);
      over = true;
      done();
    };
    return { outcome, ended };
  }

  /** An imported session a site refused: the login fails its next jobs at once, until a new one is imported. */
  private async refusedImport(id: string, message: string): Promise<void> {
    await this.deps.store.update(id, { state: 'failed', last_error: message.slice(0, LAST_ERROR_MAX_CHARS) });
    this.deps.log.info({ login_id: id }, 'the imported session was refused');
  }

  /** What the capture that signs in says of it: the session kept (the next version), or why it failed; either ends the claim. */
  private signInOutcome(id: string, secrets: LoginSecrets, version: number, done: () => void): NonNullable<CaptureLogin['signIn']> {
    return {
      signedIn: async (session: StorageState) => {
        try {
          const change = { state: 'signed_in' as const, signed_in_at: this.deps.clock.now(), last_error: null, session_version: version, signing_in: null };
          await this.deps.store.update(id, change, this.deps.secrets.seal({ ...secrets, session }));
          this.deps.log.info({ login_id: id }, 'signed in; the session is kept for the next captures');
        } finally {
          done();
        }
      },
      failed: async (message: string, refused: boolean) => {
        try {
          const { session: _dropped, ...rest } = secrets;
          const change = { state: refused ? ('failed' as const) : ('new' as const), last_error: message.slice(0, LAST_ERROR_MAX_CHARS), signing_in: null };
          await this.deps.store.update(id, change, this.deps.secrets.seal(rest));
          this.deps.log.info({ login_id: id }, 'the sign-in failed');
        } finally {
          done();
        }
      },
    };
  }

  /**
   * Waits while another node signs in with the login: until it kept a new session, or failed,
   * or its claim lapsed (a node that stopped), whichever comes first; `signal` ends the wait.
   */
  private async signedInElsewhere(id: string, sessionVersion: number, signal: AbortSignal | undefined): Promise<void> {
    this.deps.log.info({ login_id: id }, 'another node is signing in with this login; waiting for its session');
    for (;;) {
      try {
        await sleep(SIGN_IN_POLL_MS, undefined, { signal });
      } catch {
        throw new CaptureError(`The job ended while another node was signing in with the login ${id}`);
      }
      const login = await this.deps.store.get(id);
      const claim = login?.signing_in;
      if (!login || login.session_version !== sessionVersion || !claim || claim.until < this.deps.clock.now()) return;
    }
  }

  private async openSecrets(login: LoginRecord): Promise<LoginSecrets> {
    const sealed = await this.deps.store.secrets(login._id);
    if (sealed === null) {
      throw new CaptureError(`The credentials of the login "${login.name}" are no longer kept (a data directory restored from a backup holds none); give them again with PATCH /v1/logins/${login._id}`);
    }
    try {
      return this.deps.secrets.open<LoginSecrets>(sealed);
    } catch {
      throw new CaptureError(`The credentials of the login "${login.name}" could not be read: the data directory's job-secrets.key changed since they were given`);
    }
  }
}

/** The sign-in form of a form login, with its credentials. */
function formOf(login: LoginRecord, secrets: LoginSecrets): SignInForm {
  return {
    loginUrl: login.login_url!,
    username: secrets.username!,
    password: secrets.password!,
    usernameSelector: login.username_selector,
    passwordSelector: login.password_selector,
    submitSelector: login.submit_selector,
    successSelector: login.success_selector,
    successUrl: login.success_url,
  };
}

const FORM_OPTIONAL = ['username_selector', 'password_selector', 'submit_selector', 'success_selector', 'success_url'];

/** Sets the fields `input` gives on the record (in clear) and the secrets (to seal). */
function applyFields(record: LoginRecord, secrets: LoginSecrets, input: LoginPatch): void {
  if (input.name !== undefined) record.name = input.name;
  if (input.username !== undefined) secrets.username = input.username;
  if (input.password !== undefined) secrets.password = input.password;
  if (input.login_url !== undefined) {
    record.login_url = httpUrl('login_url', input.login_url);
    record.site = new URL(record.login_url).origin;
  }
  if (input.success_url !== undefined) record.success_url = httpUrl('success_url', input.success_url);
  for (const field of ['username_selector', 'password_selector', 'submit_selector', 'success_selector'] as const) {
    if (input[field] !== undefined) record[field] = input[field];
  }
  if (input.site !== undefined) {
    const url = new URL(httpUrl('site', input.site));
    if (url.pathname !== '/' || url.search || url.hash) throw new ValidationError('site must be an origin: scheme, host and port, no path', 'site');
    record.site = url.origin;
  }
  if (input.username !== undefined && record.type === 'basic' && input.username.includes(':')) {
    throw new ValidationError('username of a basic login may not contain a colon', 'username');
  }
  if (input.storage_state !== undefined) {
    secrets.session = input.storage_state as StorageState;
    record.site = sessionSite(secrets.session);
  }
}

/** The origin an imported session is for: its first origin with localStorage, or its first cookie's domain. */
function sessionSite(state: StorageState): string {
  const origin = state.origins?.[0]?.origin;
  if (origin) return origin;
  const domain = state.cookies[0]?.domain;
  if (domain) return `${state.cookies[0].secure ? 'https' : 'http'}://${domain.replace(/^\./, '')}`;
  throw new ValidationError('storage_state holds no cookie and no origin', 'storage_state');
}

/** A login as every answer shows it: never a user name, a password or a session. */
export function loginView(record: LoginRecord): LoginView {
  return {
    id: record._id,
    name: record.name,
    type: record.type,
    site: record.site,
    state: record.state,
    signed_in_at: record.signed_in_at === null ? null : formatIsoSeconds(record.signed_in_at),
    last_error: record.last_error,
    created_at: formatIsoSeconds(record.created_at),
  };
}
