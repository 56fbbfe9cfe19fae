// Functions that run inside the sign-in page of a saved form login (sent as source text by
// evaluate() in page-driver.ts). Like option-scripts.ts they stay self-contained: no imports, no
// closures over module scope.

/** What fillSignInForm is given: the credentials, the selectors the login names (found when absent), and the origin they belong to. */
export interface SignInFields {
  /** The sign-in page's origin: a page of any other (a redirect elsewhere) is not filled in. */
  origin: string;
  username: string;
  password: string;
  usernameSelector?: string;
  passwordSelector?: string;
  submitSelector?: string;
}

/**
 * Fills the sign-in form and submits it (just after answering, so the answer is not lost to the
 * navigation). Without selectors: the first visible password field, the last visible text or
 * e-mail field before it (in its form when it has one), and the form's submit button (or the
 * form submitted). Answers what stopped it (a field it could not find, or a page of another
 * origin than the sign-in page's), or null.
 */
export function fillSignInForm(fields: SignInFields): string | null {
  if (location.origin !== fields.origin) return `sign-in form at ${fields.origin}: the page moved to ${location.origin}, which is not given the credentials`;
  const visible = (element: Element) => {
    const rect = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return rect.width > 0 && rect.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  };
  const pick = (selector: string): Element | null => {
    try {
      return document.querySelector(selector);
    } catch {
      return null;
    }
  };
  const password = (fields.passwordSelector ? pick(fields.passwordSelector) : Array.from(document.querySelectorAll('input[type="password"]')).find(visible)) as
    | HTMLInputElement
    | null
    | undefined;
  if (!password) return fields.passwordSelector ? 'password_selector' : 'password field';
  const textTypes = ['text', 'email', 'tel', ''];
  const before = (element: Element) => (element.compareDocumentPosition(password) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
  const scope: ParentNode = password.form ?? document;
  const user = (
    fields.usernameSelector
      ? pick(fields.usernameSelector)
      : Array.from(scope.querySelectorAll('input'))
          .filter((input) => textTypes.includes(input.getAttribute('type')?.toLowerCase() ?? '') && visible(input) && before(input))
          .pop()
  ) as HTMLInputElement | null | undefined;
  if (!user) return fields.usernameSelector ? 'username_selector' : 'user name field';
  const submit = (
    fields.submitSelector
      ? pick(fields.submitSelector)
      : password.form?.querySelector('button[type="submit"], input[type="submit"], button:not([type])')
  ) as HTMLElement | null | undefined;
  if (fields.submitSelector && !submit) return 'submit_selector';
  const setValue = (input: HTMLInputElement, value: string) => {
    // The prototype's setter, so frameworks that watch the property see the change.
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
    input.focus();
    if (setter) setter.call(input, value);
    else input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
  };
  setValue(user, fields.username);
  setValue(password, fields.password);
  setTimeout(() => {
    if (submit) submit.click();
    else if (password.form) password.form.requestSubmit();
  }, 0);
  return null;
}

/** How a sign-in went, as the page shows it: signed in or not, and what it says. */
export interface SignInOutcome {
  signedIn: boolean;
  /** The page's error or alert text (cut to 300 characters), or its title. */
  says: string;
}

/**
 * Whether the page shows a signed-in user: `successSelector` matches (when given), the address
 * begins with `successUrl` (when given), and no visible password field is left (when no selector
 * is given). What the page says: its first visible alert or error text, else its title.
 */
export function signInOutcome({ successSelector, successUrl }: { successSelector?: string; successUrl?: string }): SignInOutcome {
  const visible = (element: Element) => {
    const rect = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    return rect.width > 0 && rect.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  };
  let matched = true;
  if (successSelector) {
    try {
      matched = document.querySelector(successSelector) !== null;
    } catch {
      matched = false;
    }
  } else {
    matched = !Array.from(document.querySelectorAll('input[type="password"]')).some(visible);
  }
  if (successUrl && !location.href.startsWith(successUrl)) matched = false;
  const alerts = Array.from(document.querySelectorAll('[role="alert"], .error, .alert, .alert-danger, .notification, .flash, .message, .invalid-feedback')).slice(0, 20);
  const said = alerts
    .filter(visible)
    .map((element) => (element.textContent ?? '').replace(/\s+/g, ' ').trim())
    .find((text) => text.length > 0);
  return { signedIn: matched, says: (said ?? document.title ?? '').slice(0, 300) };
}

/**
 * Puts a saved session's localStorage in place, before the page's own scripts run: each item of
 * the document's origin the storage does not hold yet (a fresh context holds none; a document
 * after the first keeps what the page changed).
 */
export function applyLocalStorage(origins: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>): void {
  try {
    const mine = origins.find((entry) => entry.origin === location.origin);
    if (!mine) return;
    for (const { name, value } of mine.localStorage) {
      if (localStorage.getItem(name) === null) localStorage.setItem(name, value);
    }
  } catch {
    // A document without storage (an opaque origin) keeps none.
  }
}

/** The localStorage of the document's origin, as a storageState lists it. */
export function readLocalStorage(): { origin: string; localStorage: Array<{ name: string; value: string }> } {
  const items: Array<{ name: string; value: string }> = [];
  try {
    for (let i = 0; i < localStorage.length && i < 1000; i++) {
      const name = localStorage.key(i);
      if (name !== null) items.push({ name, value: localStorage.getItem(name) ?? '' });
    }
  } catch {
    // No storage here.
  }
  return { origin: location.origin, localStorage: items };
}
