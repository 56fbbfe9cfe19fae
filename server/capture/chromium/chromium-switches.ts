import { egressChromiumArgs } from '../../egress/chromium-args.js';

/**
 * `--no-sandbox` only for root, which Chromium refuses to sandbox. Any other user (the
 * container image's and the systemd unit's) keeps the sandbox, so a page that breaks out of its
 * renderer is still inside the sandbox's namespaces and seccomp filter. `uid` is undefined where
 * there are no uids (Windows): sandboxed.
 */
export function sandboxSwitches(uid: number | undefined): string[] {
  return uid === 0 ? ['--no-sandbox'] : [];
}

/** This process's user id, undefined on Windows. */
const currentUid = (): number | undefined => process.getuid?.();

const COMMON_ARGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-gpu',
  '--disable-quic',
];

/** Switches for a headless browser of this process's user: no background traffic, and no sandbox only for root. */
export const BASE_ARGS = [...sandboxSwitches(currentUid()), ...COMMON_ARGS];

/**
 * playwright-core's own `--disable-features` list (1.65). Chromium honours only the last
 * `--disable-features` switch, so ours replaces playwright's and must carry its entries. Should
 * playwright's list change, ours still wins and keeps these.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Each context is a new browser window, and Chromium 156 loads that window's omnibox popup
 * (a WebUI page, `chrome://omnibox-popup.top-chrome/`) in a renderer of its own; and it spawns
 * a spare renderer for the next navigation, in a context about to close. With a fresh context
 * per capture, both were processes started and thrown away on every capture (measured: three
 * renderer processes per capture where one is needed).
 */
const OUR_DISABLED_FEATURES = [
  'SpareRendererForSitePerProcess',
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
];

const DISABLE_FEATURES = '--disable-features=';

export interface ChromiumCommandLine {
  args: string[];
  /** Playwright defaults to leave out, replaced by `args`. */
  ignoreDefaultArgs: string[];
}

/**
 * The command line for the capture browser: our switches (`--no-sandbox` only when `uid` is
 * root's), the egress proxy's when one is set, then `extraArgs`, with every
 * `--disable-features` merged into one switch.
 */
export function chromiumCommandLine(
  proxyServer: string | undefined,
  extraArgs: string[] = [],
  uid: number | undefined = currentUid(),
): ChromiumCommandLine {
  const extraFeatures = extraArgs.filter((arg) => arg.startsWith(DISABLE_FEATURES));
  const features = [
    ...PLAYWRIGHT_DISABLED_FEATURES,
    ...OUR_DISABLED_FEATURES,
    ...extraFeatures.flatMap((arg) => arg.slice(DISABLE_FEATURES.length).split(',')),
  ].filter(Boolean);
  return {
    args: [
      ...sandboxSwitches(uid),
      ...COMMON_ARGS,
      ...(proxyServer ? egressChromiumArgs(proxyServer) : []),
      ...extraArgs.filter((arg) => !arg.startsWith(DISABLE_FEATURES)),
      DISABLE_FEATURES + [...new Set(features)].join(','),
    ],
    ignoreDefaultArgs: [DISABLE_FEATURES + PLAYWRIGHT_DISABLED_FEATURES.join(',')],
  };
}
