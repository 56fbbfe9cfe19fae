import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import type { CaptureOptions } from '../capture-options.js';
import { evaluate, type PageDriver } from '../pipeline/page-driver.js';
import { CONSENT_DIALOG_SELECTORS } from './consent-selectors.js';

// block_cookie_banners in two layers. First DuckDuckGo's autoconsent (@duckduckgo/autoconsent,
// shipped in node_modules: its page bundle and its rules for about 800 consent managers) runs
// in every document of the page from its first script on, finds the consent manager and
// refuses consent through it, as a user clicking "reject" would, so the page takes the dialog
// and its scroll lock away itself. Then, before the picture, what is still showing of the
// common consent managers (consent-selectors.ts) is hidden with CSS, and a scroll lock left on
// html or body is undone.

/** Longest message of autoconsent's read, in characters (its own are a URL and a rule's name or code). */
const MESSAGE_MAX_CHARS = 64 * 1024;

/** The function autoconsent's bundle calls, in the page, for the host (Runtime.addBinding). */
const BINDING = '__screenshotApplianceConsent';
/** The main frame's autoconsent state, kept in the page for dismissConsentDialogs to read. */
const STATE_KEY = '__screenshotApplianceConsentState';

/** autoconsent's settings (its Config): refuse consent, cosmetic rules included, in the main world. */
const AUTOCONSENT_CONFIG = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  enableHeuristicDetection: false,
  heuristicMode: 'off',
  detectRetries: 20,
  // The bundle runs in the page's main world, so the rules' snippets run in place rather than
  // through eval messages (which a page's Content-Security-Policy could refuse).
  isMainWorld: true,
  prehideTimeout: 2000,
  visualTest: false,
  logs: { lifecycle: false, rulesteps: false, detectionsteps: false, evals: false, errors: false, messages: false, waits: false },
};

/** How long a page still being searched for a consent manager may take once loaded. */
const SEARCH_GRACE_MS = 1000;
/** How long a consent manager found but whose dialog has not shown (yet) may take. */
const DETECTED_GRACE_MS = 2500;

interface Autoconsent {
  /** The script added to every document: the bridge to the binding, then autoconsent's bundle. */
  script: string;
  /** The rules, compact, for the documents' init messages. */
  rulesFor(url: string, mainFrame: boolean): unknown;
}

let autoconsent: Promise<Autoconsent> | undefined;

/** autoconsent's bundle and rules, read on first use and kept for the process's life. */
function loadAutoconsent(): Promise<Autoconsent> {
  autoconsent ??= (async () => {
    const require = createRequire(import.meta.url);
    const dist = path.dirname(require.resolve('@duckduckgo/autoconsent'));
    const bundle = fs.readFileSync(path.join(dist, 'autoconsent.playwright.js'), 'utf8');
    const compact = JSON.parse(fs.readFileSync(require.resolve('@duckduckgo/autoconsent/rules/compact-rules.json'), 'utf8'));
    const { filterCompactRules } = await import('@duckduckgo/autoconsent');
    return {
      script: `(${bridge.toString()})(${JSON.stringify({ binding: BINDING, stateKey: STATE_KEY })});\n${bundle}`,
      rulesFor: (url, mainFrame) => ({ compact: filterCompactRules(compact, { url, mainFrame }) }),
    };
  })();
  autoconsent.catch(() => {
    autoconsent = undefined;
  });
  return autoconsent;
}

/**
 * Runs in every document before its own scripts, ahead of autoconsent's bundle: gives the
 * bundle its `autoconsentSendMessage`, passes the messages the host answers (init, eval) to the
 * binding, and keeps the main frame's progress (lifecycle, consent managers found) in the page.
 */
function bridge({ binding, stateKey }: { binding: string; stateKey: string }): void {
  const w = window as unknown as Record<string, unknown>;
  const top = window === window.top;
  const state = { lifecycle: 'loading', cmps: [] as string[] };
  if (top) Object.defineProperty(window, stateKey, { value: state });
  // Should the binding come after this script in a new document, a message waits for it a little.
  const post = (payload: string, tries: number) => {
    const send = w[binding];
    if (typeof send === 'function') (send as (payload: string) => void)(payload);
    else if (tries > 0) setTimeout(() => post(payload, tries - 1), 10);
  };
  w.autoconsentSendMessage = (message: { type: string; cmp?: string; state?: { lifecycle: string } }) => {
    if (top && message.type === 'report' && message.state) state.lifecycle = message.state.lifecycle;
    if (top && message.type === 'popupFound' && message.cmp) state.cmps.push(message.cmp);
    if (message.type === 'init' || message.type === 'eval') post(JSON.stringify({ ...message, top }), 100);
    return Promise.resolve();
  };
}

/** Before navigation: autoconsent in every document of the page, and the host's side of its messages. Nothing when `blockCookieBanners` is off. */
export async function prepareConsentDialogs(driver: PageDriver, options: CaptureOptions): Promise<void> {
  if (!options.blockCookieBanners) return;
  const { script, rulesFor } = await loadAutoconsent();
  driver.on('Runtime.bindingCalled', ({ name, payload, executionContextId: contextId }) => {
    // The binding is the page's to call too: a message longer than autoconsent's is not read.
    if (name !== BINDING || payload.length > MESSAGE_MAX_CHARS) return;
    answer(driver, contextId, payload, rulesFor).catch(() => undefined);
  });
  await driver.send('Runtime.enable', {});
  await driver.send('Runtime.addBinding', { name: BINDING });
  await driver.send('Page.addScriptToEvaluateOnNewDocument', { source: script });
}

/** Answers a document's message: its config and rules for `init`, the result of an `eval`. */
async function answer(driver: PageDriver, contextId: number, payload: string, rulesFor: Autoconsent['rulesFor']): Promise<void> {
  let message: { type?: unknown; url?: unknown; top?: unknown; id?: unknown; code?: unknown };
  try {
    message = JSON.parse(payload);
  } catch {
    return;
  }
  const reply = (response: object) =>
    driver.send('Runtime.evaluate', {
      expression: `window.autoconsentReceiveMessage && window.autoconsentReceiveMessage(${JSON.stringify(response)})`,
      awaitPromise: false,
      returnByValue: true,
      contextId,
    });
  if (message.type === 'init' && typeof message.url === 'string') {
    await reply({ type: 'initResp', config: AUTOCONSENT_CONFIG, rules: rulesFor(message.url, message.top === true) });
  } else if (message.type === 'eval' && typeof message.id === 'string' && typeof message.code === 'string') {
    const { result, exceptionDetails } = await driver.send('Runtime.evaluate', {
      expression: message.code,
      awaitPromise: true,
      returnByValue: true,
      contextId,
    });
    await reply({ type: 'evalResp', id: message.id, result: !exceptionDetails && Boolean(result.value) });
  }
}

/**
 * After load, before the capture: waits (within `timeoutMs`) for autoconsent to be done with
 * the page's consent manager, then hides what is left of a consent dialog and undoes its
 * scroll lock. Never fails the capture: a page that moves on meanwhile is captured as it is.
 */
export async function dismissConsentDialogs(driver: PageDriver, options: CaptureOptions, timeoutMs: number): Promise<void> {
  if (!options.blockCookieBanners) return;
  try {
    await evaluate(driver, consentSettled, { stateKey: STATE_KEY, searchMs: SEARCH_GRACE_MS, detectedMs: DETECTED_GRACE_MS, maxMs: timeoutMs });
    await evaluate(driver, hideConsentDialogs, { selectors: [...CONSENT_DIALOG_SELECTORS] });
  } catch {
    // The document went away (a consent manager reloading the page): nothing left to hide in it.
  }
}

/**
 * Page function: resolves once autoconsent is done with the page (nothing found, consent
 * refused or failed), or still searching after `searchMs`, or found a consent manager whose
 * dialog has not shown after `detectedMs`, or at `maxMs` whatever it is doing.
 */
export async function consentSettled(arg: { stateKey: string; searchMs: number; detectedMs: number; maxMs: number }): Promise<string> {
  const state = (window as unknown as Record<string, { lifecycle: string } | undefined>)[arg.stateKey];
  if (!state) return 'absent';
  const started = Date.now();
  const done = ['nothingDetected', 'optOutSucceeded', 'optOutFailed', 'done'];
  const searching = ['loading', 'waitingForInitResponse', 'initialized', 'started'];
  for (;;) {
    const elapsed = Date.now() - started;
    const { lifecycle } = state;
    if (done.includes(lifecycle) || elapsed >= arg.maxMs) return lifecycle;
    if (searching.includes(lifecycle) && elapsed >= arg.searchMs) return lifecycle;
    if (lifecycle === 'cmpDetected' && elapsed >= arg.detectedMs) return lifecycle;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Page function: hides every element matching `selectors` (display: none, one CSS rule each,
 * so a selector the browser does not know spoils no other), and when one of them was showing,
 * undoes the scroll lock of html and body (overflow hidden, a body fixed in place). Returns
 * whether a dialog was showing.
 */
export function hideConsentDialogs({ selectors }: { selectors: string[] }): boolean {
  const showing = (el: Element) => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0;
  };
  let shown = false;
  for (const selector of selectors) {
    try {
      for (const el of document.querySelectorAll(selector)) if (showing(el)) shown = true;
    } catch {
      // Not a selector this browser knows.
    }
  }
  const style = document.createElement('style');
  style.textContent = selectors.map((selector) => `${selector}{display:none!important}`).join('\n');
  (document.head ?? document.documentElement).appendChild(style);
  if (!shown) return false;
  for (const el of [document.documentElement, document.body]) {
    if (!el) continue;
    const computed = getComputedStyle(el);
    if (['hidden', 'clip'].includes(computed.overflowY) || ['hidden', 'clip'].includes(computed.overflowX)) {
      el.style.setProperty('overflow', 'visible', 'important');
    }
    if (el === document.body && computed.position === 'fixed') {
      el.style.setProperty('position', 'static', 'important');
      el.style.setProperty('top', 'auto', 'important');
    }
  }
  return true;
}
