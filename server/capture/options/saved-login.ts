import { type CaptureLogin, SessionRefusedError, SignInFailedError, type StorageState } from '../capture-login.js';
import { applyLocalStorage, fillSignInForm, readLocalStorage, signInOutcome } from '../in-page/sign-in-form.js';
import type { Capture } from '../pipeline/capture-state.js';
import { evaluate, type PageDriver } from '../pipeline/page-driver.js';
import { navigate, onFinalDocument } from '../pipeline/page-navigation.js';
import { navigationTimeLeft } from '../pipeline/step-combinators.js';

// A saved login on the capture's page (capture-login.ts): its session applied before
// navigation, or a sign-in on the page first, and after the picture the check that the page
// was not a sign-in form after all.

/** The longest a submitted sign-in form is waited for to load its next page. */
const AFTER_SUBMIT_MAX_MS = 10_000;

/** The session's cookies set and its localStorage put in place in every document to come. */
export async function applySession(driver: PageDriver, session: StorageState): Promise<void> {
  const steps: Array<Promise<unknown>> = [];
  if (session.cookies.length) {
    const cookies = session.cookies.map(({ name, value, domain, path, expires, httpOnly, secure, sameSite }) => ({
      name,
      value,
      domain,
      path: path ?? '/',
      ...(expires !== undefined && expires > 0 ? { expires } : {}),
      ...(httpOnly === undefined ? {} : { httpOnly }),
      ...(secure === undefined ? {} : { secure }),
      ...(sameSite === undefined ? {} : { sameSite }),
    }));
    steps.push(driver.send('Network.setCookies', { cookies }));
  }
  if (session.origins?.some((o) => o.localStorage.length)) {
    const source = `(${applyLocalStorage.toString()})(${JSON.stringify(session.origins)})`;
    steps.push(driver.send('Page.addScriptToEvaluateOnNewDocument', { source }));
  }
  await Promise.all(steps);
}

/**
 * Signs in on the capture's page with the login's form: opens the sign-in page, fills and submits
 * it, waits for the page it leads to, and tells the login the session it got (cookies and the
 * localStorage of the page it ended on) or, when the page still asks to sign in, what it said.
 */
export async function signInWithForm(capture: Capture, login: CaptureLogin): Promise<void> {
  const { driver, frame, traffic, options } = capture;
  const form = login.form!;
  const told = login.signIn!;
  try {
    await navigate(driver, frame, traffic, form.loginUrl, options.proxyServer);
    await frame.until(() => frame.reached('load'), Math.max(0, navigationTimeLeft(capture)));
    const before = frame.navigations;
    const refused = await onFinalDocument(frame, () => evaluate(driver, fillSignInForm, { ...form, origin: new URL(form.loginUrl).origin }));
    if (refused) throw new SignInFailedError(`The login "${login.name}" failed: no ${refused} (its sign-in page is ${form.loginUrl})`);
    await frame.until(() => frame.navigations > before && frame.reached('load'), Math.max(0, Math.min(AFTER_SUBMIT_MAX_MS, navigationTimeLeft(capture))));
    const outcome = await onFinalDocument(frame, () => evaluate(driver, signInOutcome, { successSelector: form.successSelector, successUrl: form.successUrl }));
    if (!outcome.signedIn) {
      const said = outcome.says ? ` (it says: ${outcome.says})` : '';
      throw new SignInFailedError(`The login "${login.name}" failed: the page still asks to sign in after the form was submitted${said}`);
    }
    const [{ cookies }, storage] = await Promise.all([driver.send('Network.getAllCookies'), evaluate(driver, readLocalStorage, null)]);
    await told.signedIn({
      cookies: cookies.map(({ name, value, domain, path, expires, httpOnly, secure, session, sameSite }) => ({
        name,
        value,
        domain,
        path,
        expires: session ? -1 : expires,
        httpOnly,
        secure,
        ...(sameSite ? { sameSite } : {}),
      })),
      origins: storage.localStorage.length ? [storage] : [],
    });
  } catch (err) {
    const refused = err instanceof SignInFailedError;
    await told.failed(refused ? err.message : `The login "${login.name}" could not sign in: ${(err as Error).message}`, refused);
    throw err;
  }
}

/**
 * After the picture: a form login's page must not be a sign-in form (the warning probe found
 * one, or its success selector matches nothing). Signed in by this very capture, the login
 * failed; with a session kept from before, the session was refused, and the job signs in again.
 * An imported session landing on a sign-in form was refused for good: the login is told, and
 * the job fails.
 */
export async function checkSignedIn(capture: Capture, login: CaptureLogin): Promise<void> {
  let signedOut = capture.taken?.probe.login != null;
  if (login.imported) {
    if (!signedOut) return;
    const message = `The imported session of the login "${login.name}" was refused: ${(capture.taken?.page.url ?? capture.request.url).slice(0, 200)} asks to sign in; import a fresh one (storage_state)`;
    await login.imported.refused(message);
    throw new SignInFailedError(message);
  }
  const form = login.form!;
  if (!signedOut && form.successSelector) {
    const outcome = await onFinalDocument(capture.frame, () => evaluate(capture.driver, signInOutcome, { successSelector: form.successSelector }));
    signedOut = !outcome.signedIn;
  }
  if (!signedOut) return;
  if (login.signIn) throw new SignInFailedError(`The login "${login.name}" failed: signed in, yet the page captured asks to sign in again`);
  throw new SessionRefusedError(login.name);
}
